package message_test

import (
	"fmt"

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
	// {Delivered:4 Failed:1 Undecodable:0 NoRoute:0}
}
