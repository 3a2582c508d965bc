package natsbridge

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
)

func TestConfigErrors(t *testing.T) {
	mb := newMailbox(t, 1<<16)
	ok := Config{Name: "n", Subject: "s", URL: "nats://127.0.0.1:1"}
	cases := map[string]func(c *Config){
		"no name":          func(c *Config) { c.Name = "" },
		"no subject":       func(c *Config) { c.Subject = "" },
		"no URL nor Conn":  func(c *Config) { c.URL = "" },
		"batch too small":  func(c *Config) { c.BatchBytes = minBatchBytes - 1 },
		"no stream":        func(c *Config) { c.JetStream = &JetStream{} },
		"batch < mailbox":  func(c *Config) { c.BatchBytes = 1024 },
		"negative batch":   func(c *Config) { c.BatchBytes = -1 },
		"batch over limit": func(c *Config) { c.BatchBytes = maxFrame + 1 },
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			c := ok
			edit(&c)
			_, err := NewOutbound(ctx(t), c, mb)
			require.ErrorIs(t, err, ErrConfig)
		})
	}
	_, err := NewOutbound(ctx(t), ok, nil)
	require.ErrorIs(t, err, ErrConfig)
	_, err = NewInbound(ctx(t), ok, nil)
	require.ErrorIs(t, err, ErrConfig)

	c, err := ok.withDefaults()
	require.NoError(t, err)
	require.Equal(t, DefaultBatchBytes, c.BatchBytes)

	// Left at 0, an outbound bridge's batch holds its mailbox's largest
	// message, even one above DefaultBatchBytes; set, it is checked.
	s := runServer(t, server.Options{})
	big := newMailboxMax(t, 1<<20, 2*DefaultBatchBytes)
	o, err := NewOutbound(ctx(t), testConfig(s, "big"), big)
	require.NoError(t, err)
	require.Greater(t, o.cfg.BatchBytes, 2*DefaultBatchBytes)
	require.NoError(t, o.OnClose())
	small := testConfig(s, "small")
	small.BatchBytes = DefaultBatchBytes
	_, err = NewOutbound(ctx(t), small, big)
	require.ErrorIs(t, err, ErrConfig)
	require.Equal(t, defaultFlushInterval, c.FlushInterval)
	ok.JetStream = &JetStream{Stream: "S"}
	c, err = ok.withDefaults()
	require.NoError(t, err)
	require.Equal(t, "n", c.JetStream.Consumer)
	require.Equal(t, defaultAckWait, c.JetStream.AckWait)
	require.Equal(t, 1, c.JetStream.Replicas)
	require.Empty(t, ok.JetStream.Consumer, "the caller's JetStream is not modified")
}

// Config.Options reach nats.Connect: a server that wants credentials
// refuses a bridge without them and accepts one with them.
func TestOptionsPassThrough(t *testing.T) {
	s := runServer(t, server.Options{Username: "duty", Password: "s3cret"})
	mb := newMailbox(t, 1<<16)
	cfg := testConfig(s, "auth")
	cfg.Options = append(cfg.Options, nats.RetryOnFailedConnect(false))
	_, err := NewInbound(ctx(t), cfg, mb)
	require.ErrorIs(t, err, nats.ErrAuthorization)
	cfg.Options = append(cfg.Options, nats.UserInfo("duty", "s3cret"))
	in, err := NewInbound(ctx(t), cfg, mb)
	require.NoError(t, err)
	require.NoError(t, in.OnClose())
}

// A batch larger than the server's max_payload could never be published.
func TestBatchAboveMaxPayloadRefused(t *testing.T) {
	s := runServer(t, server.Options{MaxPayload: 32 * 1024})
	cfg := testConfig(s, "maxpayload")
	_, err := NewOutbound(ctx(t), cfg, newMailboxMax(t, 1<<16, 1024))
	require.ErrorIs(t, err, ErrConfig)
	cfg.BatchBytes = 16 * 1024
	out, err := NewOutbound(ctx(t), cfg, newMailboxMax(t, 1<<16, 1024))
	require.NoError(t, err)
	require.NoError(t, out.OnClose())
}
