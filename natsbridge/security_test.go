package natsbridge

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/dutyrt/duty/agent"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"
)

// A server that requires a user, whose permissions cover the bridge's
// subject only: the bridges work with the user's credentials
// (Config.Options), are refused without them or with a wrong password, and
// a bridge on a subject the user may not use is refused (ErrDenied)
// instead of losing its messages at the server in silence.
func TestCoreAuthorization(t *testing.T) {
	const subject = "duty.secure.orders"
	allow := &server.SubjectPermission{Allow: []string{subject}}
	s := runServer(t, server.Options{Users: []*server.User{{
		Username:    "bridge",
		Password:    "s3cret",
		Permissions: &server.Permissions{Publish: allow, Subscribe: allow},
	}}})
	cfg := testConfig(s, "secure")
	cfg.Subject = subject
	cfg.Options = append(cfg.Options, nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))

	for name, opts := range map[string][]nats.Option{
		"no credentials": nil,
		"wrong password": {nats.UserInfo("bridge", "guess")},
	} {
		c := cfg
		c.Options = append(append([]nats.Option(nil), cfg.Options...), opts...)
		_, err := NewOutbound(ctx(t), c, newMailbox(t, 1<<12))
		require.ErrorIs(t, err, nats.ErrAuthorization, name)
		_, err = NewInbound(ctx(t), c, newMailbox(t, 1<<12))
		require.ErrorIs(t, err, nats.ErrAuthorization, name)
	}

	cfg.Options = append(cfg.Options, nats.UserInfo("bridge", "s3cret"))
	src, dst := newMailbox(t, 1<<16), newMailbox(t, 1<<16)
	in, err := NewInbound(ctx(t), cfg, dst)
	require.NoError(t, err)
	out, err := NewOutbound(ctx(t), cfg, src)
	require.NoError(t, err)
	f := &feeder{mb: src, upTo: 500}
	c := &checker{t: t, mb: dst}
	pump(t, func() bool { return c.next == 500 }, f, out, in, c)
	require.NoError(t, out.OnClose())
	require.NoError(t, in.OnClose())

	other := cfg
	other.Subject = "duty.secure.fills"
	_, err = NewInbound(ctx(t), other, newMailbox(t, 1<<12))
	require.ErrorIs(t, err, ErrDenied)
	require.ErrorIs(t, err, nats.ErrPermissionViolation)

	src = newMailbox(t, 1<<16)
	out, err = NewOutbound(ctx(t), other, src)
	require.NoError(t, err, "publish permissions show only when publishing")
	f = &feeder{mb: src, upTo: 100}
	var doErr error
	for deadline := time.Now().Add(10 * time.Second); doErr == nil; {
		require.True(t, time.Now().Before(deadline), "the denial is not seen")
		_, _ = f.DoWork()
		_, doErr = out.DoWork()
		time.Sleep(100 * time.Microsecond)
	}
	require.ErrorIs(t, doErr, agent.ErrTermination)
	require.ErrorIs(t, doErr, ErrDenied)
	batched := out.Stats().Batched
	require.ErrorIs(t, out.OnClose(), ErrLost)
	require.Equal(t, batched, out.Stats().LostMessages, "every message sent to the denied subject is counted")
}

// selfSigned returns a certificate for 127.0.0.1, signed by itself, and a
// pool that trusts it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "duty test server"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// A server that requires TLS: the bridges connect with a client TLS
// configuration that trusts the server's certificate (nats.Secure in
// Config.Options), and are refused without it.
func TestCoreTLS(t *testing.T) {
	cert, pool := selfSigned(t)
	s := runServer(t, server.Options{
		TLS:        true,
		TLSTimeout: 5,
		TLSConfig:  &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
	})
	cfg := testConfig(s, "tls")
	_, err := NewOutbound(ctx(t), cfg, newMailbox(t, 1<<12))
	require.Error(t, err, "a client that does not trust the server's certificate")

	cfg.Options = append(cfg.Options, nats.Secure(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}))
	src, dst := newMailbox(t, 1<<16), newMailbox(t, 1<<16)
	in, err := NewInbound(ctx(t), cfg, dst)
	require.NoError(t, err)
	out, err := NewOutbound(ctx(t), cfg, src)
	require.NoError(t, err)
	require.True(t, out.nc.TLSRequired())
	f := &feeder{mb: src, upTo: 500}
	c := &checker{t: t, mb: dst}
	pump(t, func() bool { return c.next == 500 }, f, out, in, c)
	require.NoError(t, out.OnClose())
	require.NoError(t, in.OnClose())
}
