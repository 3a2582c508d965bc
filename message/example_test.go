package message_test

import (
	"context"
	"fmt"
	"time"

	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/message"
	"github.com/dutyrt/duty/timer"
)

// Order travels as its own 24 bytes: every byte belongs to a field.
type Order struct {
	ID    uint64
	Price int64
	Qty   int32
	Side  uint8
	_     [3]byte
}

type Cancel struct {
	ID uint64
}

var (
	Orders  = message.MustFixed[Order](1)
	Cancels = message.MustFixed[Cancel](2)
)

// engine is an agent's state; its router calls its methods.
type engine struct {
	open map[uint64]int32
}

func (e *engine) onOrder(o *Order) error {
	e.open[o.ID] = o.Qty
	return nil
}

func (e *engine) onCancel(c *Cancel) error {
	if _, ok := e.open[c.ID]; !ok {
		return fmt.Errorf("cancel of unknown order %d", c.ID)
	}
	delete(e.open, c.ID)
	return nil
}

func Example() {
	mb, _ := mailbox.New(mailbox.Config{Name: "engine"})
	e := &engine{open: map[uint64]int32{}}
	r := message.NewRouter()
	_ = message.Handle(r, Orders, e.onOrder)
	_ = message.Handle(r, Cancels, e.onCancel)

	_ = Orders.Send(mb, &Order{ID: 1, Price: 101, Qty: 5})
	_ = Orders.Send(mb, &Order{ID: 2, Price: 102, Qty: 7})
	_ = Cancels.Send(mb, &Cancel{ID: 1})
	_ = Cancels.Send(mb, &Cancel{ID: 9})

	// An agent's DoWork, or mailbox.NewReceiverActor("engine", mb, r).
	n, err := mb.DrainTo(r, 256)
	fmt.Println(n, err)
	fmt.Println(e.open)
	fmt.Printf("%+v\n", r.Stats())
	// Output:
	// 4 cancel of unknown order 9
	// map[2:7]
	// {Delivered:4 Failed:1 Aborted:0 Undecodable:0 NoRoute:0}
}

// A request carries its sender's address and a call id; the reply
// carries the id back.
type Quote struct {
	ID      uint64
	ReplyTo message.Address
	Qty     int64
}

type Ack struct {
	ID     uint64
	Filled int64
}

var (
	Quotes = message.MustFixed[Quote](10)
	Acks   = message.MustFixed[Ack](11)
)

// A request and its reply between two mailboxes, correlated by Calls,
// with a deadline on Calls' timer wheel. Both sides would be agents;
// here one goroutine steps them.
func ExampleCalls() {
	reg := message.NewRegistry(nil) // nil: this process only; ipc.Dir(path) adds mailbox files
	serverBox, _ := mailbox.New(mailbox.Config{Name: "server"})
	clientBox, _ := mailbox.New(mailbox.Config{Name: "client"})
	server, _ := reg.Register("server", serverBox)
	client, _ := reg.Register("client", clientBox)

	// The server replies to whoever asked.
	serverRouter := message.NewRouter()
	_ = message.Handle(serverRouter, Quotes, func(q *Quote) error {
		to, err := reg.Lookup(context.Background(), q.ReplyTo)
		if err != nil {
			return err
		}
		return Acks.Send(to, &Ack{ID: q.ID, Filled: q.Qty})
	})

	// The client keeps, per call, what it asked for.
	calls, _ := message.NewCalls(timer.Config{Resolution: 1 << 20, TicksPerWheel: 64}, func(id uint64, qty int64) {
		fmt.Println("timed out: call", id, "for", qty)
	})
	clientRouter := message.NewRouter()
	_ = message.Handle(clientRouter, Acks, func(a *Ack) error {
		if asked, ok := calls.End(a.ID); ok {
			fmt.Println("call", a.ID, "asked", asked, "filled", a.Filled)
		}
		return nil
	})

	now := int64(0)
	id, _ := calls.Begin(now+int64(time.Millisecond), 5)
	to, _ := reg.Lookup(context.Background(), server)
	_ = Quotes.Send(to, &Quote{ID: id, ReplyTo: client, Qty: 5})
	_, _ = calls.Begin(now+int64(time.Millisecond), 7) // never sent: it will time out

	_, _ = serverBox.DrainTo(serverRouter, 16) // the server's duty cycle
	_, _ = clientBox.DrainTo(clientRouter, 16) // the client's
	for range 4 {
		now += int64(time.Millisecond)
		calls.Poll(now)
	}
	// Output:
	// call 1 asked 5 filled 5
	// timed out: call 2 for 7
}
