package natsbridge_test

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/natsbridge"
	"github.com/dutyrt/duty/runner"
)

// Two mailboxes bridged through an embedded NATS server, core mode: the
// outbound agent runs on a runner's thread; the inbound side delivers from
// the client's subscription.
func Example() {
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		panic(err)
	}
	srv.Start()
	defer func() { srv.Shutdown(); srv.WaitForShutdown() }()
	if !srv.ReadyForConnections(10 * time.Second) {
		panic("server not ready")
	}

	local, _ := mailbox.New(mailbox.Config{Name: "orders"})
	remote, _ := mailbox.New(mailbox.Config{Name: "orders-remote"})
	cfg := natsbridge.Config{Name: "orders", Subject: "duty.orders", URL: srv.ClientURL()}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	in, err := natsbridge.NewInbound(ctx, cfg, remote)
	if err != nil {
		panic(err)
	}
	defer in.OnClose()
	out, err := natsbridge.NewOutbound(ctx, cfg, local)
	if err != nil {
		panic(err)
	}
	r, err := runner.New(out)
	if err != nil {
		panic(err)
	}
	if err := r.Start(); err != nil {
		panic(err)
	}
	defer r.Close()

	_ = local.Send(1, []byte("buy 100 XYZ"))
	_ = local.SendParts(2, []byte("header"), []byte("sell 50 XYZ"))
	for got := 0; got < 2; {
		n, _ := remote.Drain(func(m *mailbox.Message) mailbox.Action {
			fmt.Printf("type %d: %q\n", m.TypeID(), m.Parts())
			return mailbox.Continue
		}, 10)
		got += n
		time.Sleep(time.Millisecond)
	}
	// Output:
	// type 1: ["buy 100 XYZ"]
	// type 2: ["header" "sell 50 XYZ"]
}
