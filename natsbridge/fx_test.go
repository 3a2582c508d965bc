package natsbridge

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"

	"github.com/dutyrt/duty/runner"
)

// Module builds the bridges supplied into its group, runner.Module runs
// them, and fx stop closes them.
func TestFxModule(t *testing.T) {
	s := runServer(t, server.Options{})
	src, dst := newMailbox(t, 1<<16), newMailbox(t, 1<<16)
	cfg := testConfig(s, "fx")
	var set *Set
	app := fx.New(
		fx.NopLogger,
		runner.Module,
		Module,
		fx.Provide(AsBridge(func() Bridge { return Bridge{Config: cfg, Mailbox: src, Direction: Out} })),
		fx.Provide(AsBridge(func() Bridge { return Bridge{Config: cfg, Mailbox: dst, Direction: In} })),
		fx.Populate(&set),
	)
	require.NoError(t, app.Err())
	start, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, app.Start(start))
	require.Len(t, set.Outbound, 1)
	require.Len(t, set.Inbound, 1)

	for i := range 100 {
		require.NoError(t, sendMessage(src, i))
	}
	c := &checker{t: t, mb: dst}
	pump(t, func() bool { return c.next == 100 }, c)
	require.NoError(t, app.Stop(start))
	st := set.Stats()
	require.Equal(t, int64(100), st[0].Batched)
	require.Equal(t, int64(100), st[1].Delivered)
	require.True(t, set.Inbound[0].nc.IsClosed(), "fx stop closed the bridges")
}

func TestFxModuleFailsOnBadBridge(t *testing.T) {
	app := fx.New(
		fx.NopLogger,
		runner.Module,
		Module,
		fx.Provide(AsBridge(func() Bridge { return Bridge{Config: Config{Name: "x"}, Mailbox: nil} })),
	)
	require.ErrorIs(t, app.Err(), ErrConfig)
}
