package natsfx_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/goleak"

	"github.com/dutyrt/duty/dutyfx"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/natsbridge"
	"github.com/dutyrt/duty/natsbridge/natsfx"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func runServer(t *testing.T) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	require.NoError(t, err)
	s.Start()
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	require.True(t, s.ReadyForConnections(10*time.Second))
	return s
}

// The module builds the bridges supplied into its group, dutyfx.Runners
// runs them, and fx stop closes them: messages sent into one mailbox come
// out of the other through a real server.
func TestModule(t *testing.T) {
	s := runServer(t)
	src, err := mailbox.New(mailbox.Config{Name: "src"})
	require.NoError(t, err)
	dst, err := mailbox.New(mailbox.Config{Name: "dst"})
	require.NoError(t, err)
	cfg := natsbridge.Config{Name: "fx", Subject: "duty.test.fx", URL: s.ClientURL()}
	var set *natsfx.Set
	app := fx.New(fx.NopLogger,
		dutyfx.Runners,
		natsfx.Module,
		fx.Provide(natsfx.AsBridge(func() natsfx.Bridge { return natsfx.Bridge{Config: cfg, Mailbox: src, Direction: natsfx.Out} })),
		fx.Provide(natsfx.AsBridge(func() natsfx.Bridge { return natsfx.Bridge{Config: cfg, Mailbox: dst, Direction: natsfx.In} })),
		fx.Populate(&set),
	)
	require.NoError(t, app.Err())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, app.Start(ctx))
	require.Len(t, set.Outbound, 1)
	require.Len(t, set.Inbound, 1)
	for i := range 100 {
		require.NoError(t, src.Send(1, []byte(fmt.Sprintf("m%03d", i))))
	}
	var got []string
	for len(got) < 100 && ctx.Err() == nil {
		_, err := dst.Drain(func(m *mailbox.Message) mailbox.Action {
			got = append(got, string(m.Payload()))
			return mailbox.Continue
		}, 100)
		require.NoError(t, err)
		time.Sleep(time.Millisecond)
	}
	require.Len(t, got, 100)
	for i, m := range got {
		require.Equal(t, fmt.Sprintf("m%03d", i), m)
	}
	require.NoError(t, app.Stop(ctx))
	require.Equal(t, int64(100), set.Inbound[0].Stats().Delivered)
}

func TestModuleFailsOnBadBridge(t *testing.T) {
	app := fx.New(fx.NopLogger, dutyfx.Runners, natsfx.Module,
		fx.Provide(natsfx.AsBridge(func() natsfx.Bridge { return natsfx.Bridge{Config: natsbridge.Config{Name: "x"}} })))
	require.ErrorIs(t, app.Err(), natsbridge.ErrConfig)
}
