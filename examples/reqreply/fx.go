package main

import (
	"context"
	"io"

	"go.uber.org/fx"

	"github.com/dutyrt/duty/dutyfx"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/message"
)

// withFx runs the same agents wired by fx: two named mailboxes, the
// registry, and the agents in dutyfx's group, which ends the application
// when the client is done.
func withFx(ctx context.Context, n int, out io.Writer) error {
	app := fx.New(fx.NopLogger,
		dutyfx.Runners,
		fx.Supply(dutyfx.Config{ShutdownOnStop: true}),
		dutyfx.Mailbox("server", mailbox.Config{}),
		dutyfx.Mailbox("client", mailbox.Config{}),
		fx.Provide(fx.Annotate(func(s, c *mailbox.Mailbox) (*message.Registry, error) {
			reg := message.NewRegistry(nil)
			_, err := reg.Register("server", s)
			if err == nil {
				_, err = reg.Register("client", c)
			}
			return reg, err
		}, fx.ParamTags(dutyfx.Named("server"), dutyfx.Named("client")))),
		fx.Provide(dutyfx.AsAgent(newServer, fx.ParamTags(dutyfx.Named("server")))),
		fx.Provide(dutyfx.AsAgent(func(in, server *mailbox.Mailbox) (*client, error) {
			self, _ := message.AddressOf("client")
			return newClient(in, server, self, n, out)
		}, fx.ParamTags(dutyfx.Named("client"), dutyfx.Named("server")))),
	)
	if err := app.Start(ctx); err != nil {
		return err
	}
	select {
	case <-app.Wait():
	case <-ctx.Done():
	}
	return app.Stop(context.Background())
}
