package idle_test

import (
	"fmt"
	"sync/atomic"

	"github.com/dutyrt/duty/idle"
)

func ExampleParse() {
	for _, spec := range []string{"spin", "spin:64", "sleep-ns:2000", "backoff", "backoff:20:10:2us:5ms", "fast"} {
		s, err := idle.Parse(spec)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(s.Alias(), s)
	}
	// Output:
	// spin spin
	// spin spin:64
	// sleep-ns sleep-ns:2000
	// backoff backoff:10:5:1µs:1ms
	// backoff backoff:20:10:2µs:5ms
	// idle: bad strategy spec "fast": unknown strategy; want one of noop, spin, yield, sleep-ns, sleep-ms, backoff
}

// The canonical duty cycle: pass every work count to the strategy.
func ExampleBackoff() {
	s := idle.Backoff()
	work := []int{3, 0, 0, 0, 1, 0}
	for _, n := range work {
		s.Idle(n)
		fmt.Println(n, s.(idle.StateReporter).State())
	}
	// Output:
	// 3 not-idle
	// 0 spinning
	// 0 spinning
	// 0 spinning
	// 1 not-idle
	// 0 spinning
}

// A Controllable strategy reads its mode from a shared word on every idle
// call: an operator can switch a running agent from parking to spinning.
func ExampleControllable() {
	var mode atomic.Int64 // in practice a counter in a shared file
	s := idle.Controllable(&mode)
	mode.Store(idle.ModeBusySpin)
	state := s.(idle.StateReporter) // every built-in strategy reports its state
	s.Idle(0)
	fmt.Println(state.State())
	mode.Store(idle.ModeYield)
	s.Idle(0)
	fmt.Println(state.State())
	// Output:
	// spinning
	// yielding
}
