package message_test

import (
	"fmt"
	"time"

	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/message"
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

// A request starts with a RequestHeader (the call id and the caller's
// address, filled by Ask); its reply with a ReplyHeader (filled by Reply).
type Quote struct {
	message.RequestHeader
	Qty int64
}

type Ack struct {
	message.ReplyHeader
	Filled int64
}

var (
	Quotes = message.MustFixed[Quote](10)
	Acks   = message.MustFixed[Ack](11)
)

// A request and its reply between two mailboxes: the client asks with
// Calls, the server answers with Reply, and a call whose reply never
// comes ends with ErrTimeout at a Poll after its deadline. Both sides
// would be agents; here one goroutine steps them, on a manual clock.
func ExampleCalls() {
	reg := message.NewRegistry(nil) // nil: this process only; ipc.Dir(path) adds mailbox files
	serverBox, _ := mailbox.New(mailbox.Config{Name: "server"})
	clientBox, _ := mailbox.New(mailbox.Config{Name: "client"})
	_, _ = reg.Register("server", serverBox)
	self, _ := reg.Register("client", clientBox)

	// The server answers whoever asked.
	serverRouter := message.NewRouter()
	_ = message.Handle(serverRouter, Quotes, func(q *Quote) error {
		return Acks.Reply(reg, q.RequestHeader, &Ack{Filled: q.Qty})
	})

	// The client keeps, per call, what it asked for.
	clientRouter := message.NewRouter()
	clk := clock.NewManual(time.Unix(0, 0))
	calls, _ := message.NewCalls(clientRouter, Quotes, Acks, self, func(qty int64, a *Ack, err error) {
		if err != nil {
			fmt.Println("asked", qty, "error:", err)
			return
		}
		fmt.Println("asked", qty, "filled", a.Filled)
	}, message.WithTimeout(time.Millisecond), message.WithClock(clk))

	_ = calls.Ask(serverBox, &Quote{Qty: 5}, 5)
	_, _ = serverBox.DrainTo(serverRouter, 16) // the server's duty cycle
	_, _ = clientBox.DrainTo(clientRouter, 16) // the client's

	_ = calls.Ask(serverBox, &Quote{Qty: 7}, 7) // the server does not run again: this call times out
	for range 4 {
		clk.Advance(time.Millisecond)
		calls.Poll()
	}
	// Output:
	// asked 5 filled 5
	// asked 7 error: message: call timed out
}
