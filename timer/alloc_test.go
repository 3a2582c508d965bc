package timer

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// sink counts expiries through a method value, the way an agent passes its
// handler (w.Poll(now, a.onTimer, n)).
type sink struct{ n int }

func (s *sink) onTimer(now, id int64) bool { s.n++; return true }

// TestSteadyStateAllocatesNothing: once no tick needs to grow, Schedule,
// Cancel, Deadline and Poll (with a method value as the handler, and a
// handler that refuses) allocate nothing.
func TestSteadyStateAllocatesNothing(t *testing.T) {
	w := newWheel(t, Config{Resolution: 1 << 10, TicksPerWheel: 64, TickAllocation: 8})
	var s sink
	now := int64(0)
	step := func() {
		now += 100
		a, err := w.Schedule(now + 3000)
		if err != nil {
			panic(err)
		}
		b, _ := w.Schedule(now + 50_000)
		w.Schedule(now - 10) // due at once
		if _, ok := w.Deadline(b); !ok {
			panic("lost b")
		}
		w.Cancel(b)
		_ = a // expires about 30 polls later
		w.Poll(now, s.onTimer, 1000)
		w.Poll(now, func(int64, int64) bool { return false }, 1)
	}
	for range 10_000 { // let every tick reach its steady size
		step()
	}
	capacity := w.Capacity()
	require.Zero(t, testing.AllocsPerRun(10_000, step))
	require.Equal(t, capacity, w.Capacity(), "no tick grew during the measurement")
	require.Greater(t, s.n, 20_000)
}

// TestGrowthIsTheOnlyAllocation: growing a tick allocates (its deadlines
// and its slots' generations); the other ticks keep their slots.
func TestGrowthIsTheOnlyAllocation(t *testing.T) {
	w := newWheel(t, Config{Resolution: 1, TicksPerWheel: 4, TickAllocation: 1})
	require.Equal(t, 2.0, testing.AllocsPerRun(1, func() { w.Schedule(0) }), "tick 0 grows from 1 to 2 slots")
	require.Equal(t, 4+1, w.Capacity())
}
