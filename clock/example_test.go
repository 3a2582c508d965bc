package clock_test

import (
	"fmt"
	"time"

	"github.com/dutyrt/duty/clock"
)

// heartbeat is an agent-like component that reads time from a clock.Nano
// and does something once per interval: in production a Cached updated by
// its runner (runner.WithCachedClock), in a test a Cached driven by hand.
type heartbeat struct {
	clk      clock.Nano
	interval time.Duration
	next     int64
	beats    int
}

func (h *heartbeat) DoWork() (int, error) {
	now := h.clk.Nanos()
	if now < h.next {
		return 0, nil
	}
	h.beats++
	h.next = now + int64(h.interval)
	return 1, nil
}

// A Cached is the standard test clock: the test decides what time it is.
func ExampleCached() {
	var c clock.Cached
	h := &heartbeat{clk: &c, interval: 10 * time.Millisecond}
	for range 5 {
		n, _ := h.DoWork()
		fmt.Print(n, " ")
		c.Advance(4 * time.Millisecond)
	}
	fmt.Println("beats:", h.beats)
	// Output: 1 0 0 1 0 beats: 2
}

// Driven by hand: the caller owns the loop (as with agent.Invoker) and sets
// the clock once per cycle, before the work that reads it.
func ExampleCached_Update() {
	var c clock.Cached
	h := &heartbeat{clk: &c, interval: time.Millisecond}
	for range 3 {
		c.Update(clock.System.Nanos())
		_, _ = h.DoWork()
		time.Sleep(2 * time.Millisecond)
	}
	fmt.Println("beats:", h.beats)
	// Output: beats: 3
}

// System's Nanos measure durations; its origin is the process's, shared by
// every reader in it.
func ExampleSystem() {
	start := clock.System.Nanos()
	time.Sleep(time.Millisecond)
	fmt.Println(clock.System.Nanos()-start >= int64(time.Millisecond))
	// Output: true
}
