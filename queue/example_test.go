package queue_test

import (
	"errors"
	"fmt"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/queue"
)

type Order struct {
	ID    int64
	Price int64
	Qty   int64
}

// matcher is an agent whose mailbox is a ManyToOne queue of *Order: any
// goroutine offers, the agent drains a bounded batch in every duty cycle.
type matcher struct {
	in     *queue.ManyToOne[*Order]
	volume int64
}

func (m *matcher) RoleName() string { return "matcher" }
func (m *matcher) OnStart() error   { return nil }
func (m *matcher) OnClose() error   { return nil }

func (m *matcher) DoWork() (int, error) {
	return m.in.Drain(m.onOrder, 16), nil
}

func (m *matcher) onOrder(o *Order) {
	m.volume += o.Price * o.Qty
	fmt.Printf("order %d: %d @ %d\n", o.ID, o.Qty, o.Price)
}

// An agent drains its ManyToOne mailbox of *Order in DoWork. An Invoker
// drives it step by step here; a runner.Runner runs it on its own thread
// in a real program, and producers on other goroutines offer.
func Example_agentMailbox() {
	in, err := queue.NewManyToOne[*Order](1000) // rounded up to 1024
	if err != nil {
		panic(err)
	}
	m := &matcher{in: in}
	inv, _ := agent.NewInvoker(m)
	_ = inv.Start()

	for i := range 3 {
		if !in.Offer(&Order{ID: int64(i + 1), Price: 100 + int64(i), Qty: 10}) {
			fmt.Println("full: retry later or drop")
		}
	}
	work, _ := inv.Invoke()
	fmt.Println("work:", work, "volume:", m.volume, "capacity:", in.Capacity())
	work, _ = inv.Invoke()
	fmt.Println("work:", work)
	_ = inv.Close()
	// Output:
	// order 1: 10 @ 100
	// order 2: 10 @ 101
	// order 3: 10 @ 102
	// work: 3 volume: 3030 capacity: 1024
	// work: 0
}

// Offer never blocks: a full queue says so, and the producer decides.
func ExampleOneToOne_Offer() {
	q, _ := queue.NewOneToOne[int](2)
	fmt.Println(q.Offer(1), q.Offer(2), q.Offer(3))
	v, ok := q.Poll()
	fmt.Println(v, ok, q.Size(), q.Capacity()-q.Size())
	fmt.Println(q.Offer(3), q.DrainTo(nil, 10))
	_, ok = q.Poll()
	fmt.Println(ok, q.Size())
	// Output:
	// true true false
	// 1 true 1 1
	// true [2 3]
	// false 0
}

// Capacities are rounded up to a power of two; an impossible one is an
// error, not a panic.
func ExampleNewManyToMany() {
	q, err := queue.NewManyToMany[string](5)
	fmt.Println(q.Capacity(), err)
	_, err = queue.NewManyToMany[string](1)
	fmt.Println(errors.Is(err, queue.ErrCapacity), err)
	// Output:
	// 8 <nil>
	// true queue: invalid capacity: 1 (want 2..1073741824)
}
