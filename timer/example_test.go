package timer_test

import (
	"fmt"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/timer"
)

func ExampleWheel() {
	// Times in ns; ticks of 1024 ns, 256 ticks (a rotation of 262 µs).
	w, err := timer.NewWheel(timer.Config{Start: 0, Resolution: 1 << 10, TicksPerWheel: 256})
	if err != nil {
		panic(err)
	}
	a, _ := w.Schedule(5_000)
	b, _ := w.Schedule(2_000)
	c, _ := w.Schedule(1_000_000) // several rotations ahead
	fmt.Println("cancel c:", w.Cancel(c), "again:", w.Cancel(c))

	expire := func(now, id int64) bool {
		fmt.Printf("at %d: timer %s\n", now, map[int64]string{a: "a", b: "b"}[id])
		return true
	}
	// A duty cycle polls every 700 ns, with the time it read once.
	for now := int64(0); w.TimerCount() > 0; now += 700 {
		w.Poll(now, expire, 10)
	}
	// Output:
	// cancel c: true again: false
	// at 2100: timer b
	// at 5600: timer a
}

// A handler that cannot act now returns false: the timer stays and is
// offered again first by the next poll.
func ExampleHandler() {
	w, _ := timer.NewWheel(timer.Config{Resolution: 16, TicksPerWheel: 8})
	id, _ := w.Schedule(10)
	busy := true
	h := func(now, id int64) bool {
		if busy {
			fmt.Println(now, "busy, later")
			return false
		}
		fmt.Println(now, "done")
		return true
	}
	fmt.Println(w.Poll(12, h, 10), w.TimerCount())
	busy = false
	fmt.Println(w.Poll(13, h, 10), w.TimerCount())
	_, ok := w.Deadline(id)
	fmt.Println("still scheduled:", ok)
	// Output:
	// 12 busy, later
	// 0 1
	// 13 done
	// 1 0
	// still scheduled: false
}

// orders is an agent that expires orders not filled within a timeout. The
// wheel belongs to the agent: DoWork schedules, cancels and polls it on
// the agent's thread, with the time of the cycle.
type orders struct {
	now     func() int64 // a cached clock, read once per cycle
	wheel   *timer.Wheel
	byTimer map[int64]string // timer id -> order
	timerOf map[string]int64 // order -> timer id
	arrived []string         // orders received this cycle (a mailbox, really)
	filled  []string         // fills received this cycle
}

const orderTimeout = 50_000 // ns

func (o *orders) RoleName() string { return "orders" }
func (o *orders) OnStart() error   { return nil }
func (o *orders) OnClose() error   { return nil }

func (o *orders) DoWork() (int, error) {
	now := o.now()
	work := 0
	for _, order := range o.arrived {
		id, err := o.wheel.Schedule(now + orderTimeout)
		if err != nil {
			return work, err
		}
		o.byTimer[id], o.timerOf[order] = order, id
		work++
	}
	o.arrived = o.arrived[:0]
	for _, order := range o.filled {
		if id, ok := o.timerOf[order]; ok && o.wheel.Cancel(id) {
			delete(o.byTimer, id)
			delete(o.timerOf, order)
			fmt.Println(now, "filled", order)
			work++
		}
	}
	o.filled = o.filled[:0]
	// Expiries are work: the idle strategy must not sleep through them.
	return work + o.wheel.Poll(now, o.expire, 16), nil
}

func (o *orders) expire(now, id int64) bool {
	order := o.byTimer[id]
	delete(o.byTimer, id) // the id is reused by a later Schedule
	delete(o.timerOf, order)
	fmt.Println(now, "expired", order)
	return true
}

// An Invoker drives the agent here with a made-up clock, 1 µs per cycle,
// so the wheel (ticks of 1024 ns) is polled at least once per tick; in
// production a runner.Runner runs the same agent on its own thread.
func Example_agent() {
	clock := int64(0)
	w, err := timer.NewWheel(timer.Config{Start: clock, Resolution: 1 << 10, TicksPerWheel: 64})
	if err != nil {
		panic(err)
	}
	o := &orders{now: func() int64 { return clock }, wheel: w, byTimer: map[int64]string{}, timerOf: map[string]int64{}}
	inv, _ := agent.NewInvoker(o)
	_ = inv.Start()
	for cycle := 0; cycle < 100; cycle++ {
		switch cycle {
		case 0:
			o.arrived = append(o.arrived, "buy-1", "sell-2")
		case 20:
			o.filled = append(o.filled, "sell-2")
		}
		_, _ = inv.Invoke()
		clock += 1_000
	}
	_ = inv.Close()
	// buy-1 is due at 50000, in tick 48; the poll at 50000 still had to
	// finish tick 47 (the previous poll was at 49000), so the next poll
	// expires it: one poll late, as the package documentation bounds it.

	// Output:
	// 20000 filled sell-2
	// 51000 expired buy-1
}
