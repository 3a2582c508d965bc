package runner

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/idle"
)

// clockWatcher records, in OnStart and at the start of each DoWork, the
// cached clock's value and clock.System's time around it, then zeroes the
// clock at the end of DoWork: a non-zero value at the next DoWork was set
// by the runner in between. It stops itself after cycles cycles; every
// tenth cycle sleeps 1.5 ms, so the clock has to move.
type clockWatcher struct {
	c      *clock.Cached
	cycles int
	start  int64
	seen   []int64 // the clock at the start of each DoWork
	before []int64 // clock.System at the end of the previous DoWork
	after  []int64 // clock.System at the start of this DoWork, after reading the clock
	ended  int64
}

func (w *clockWatcher) RoleName() string { return "clock-watcher" }
func (w *clockWatcher) OnStart() error   { w.start = w.c.Nanos(); return nil }
func (w *clockWatcher) OnClose() error   { return nil }
func (w *clockWatcher) DoWork() (int, error) {
	v := w.c.Nanos()
	w.seen = append(w.seen, v)
	w.after = append(w.after, clock.System.Nanos())
	w.before = append(w.before, w.ended)
	if len(w.seen)%10 == 0 {
		time.Sleep(1500 * time.Microsecond)
	}
	w.c.Update(0) // the test's sentinel; the runner's next set replaces it
	w.ended = clock.System.Nanos()
	if len(w.seen) == w.cycles {
		return 0, agent.ErrDone
	}
	return len(w.seen) % 2, nil
}

// anchorSlack bounds how far the cached clock may lag clock.System beyond
// the cycle it belongs to: the window of the anchoring pair (retried up to
// 10 times for < 2 µs) when the machine is loaded. Generous on purpose:
// what fails it is a clock not updated for a cycle (a lag of the 1.5 ms
// sleeps) or with another origin (a lag or lead of the process's age).
const anchorSlack = 500 * time.Microsecond

// aheadSlack bounds how far the cached clock may be ahead of clock.System:
// the extrapolation's rate error over one resync interval (about 1 ns once
// internal/ticks has calibrated, more in the first 50 ms of the process).
const aheadSlack = 20 * time.Microsecond

func TestCachedClockIsSetBeforeEachDoWork(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spec  string
		timed bool
	}{
		{"noop", "noop", true},
		{"noop-untimed", "noop", false},
		{"sleep", "sleep-ns:1000", true},
		{"backoff-untimed", "backoff", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := idle.Parse(tc.spec)
			require.NoError(t, err)
			c := new(clock.Cached)
			w := &clockWatcher{c: c, cycles: 300}
			before := clock.System.Nanos()
			r, err := New(w, WithIdle(s), WithCachedClock(c), WithCycleTiming(tc.timed))
			require.NoError(t, err)
			require.NoError(t, r.Start())
			select {
			case <-r.Done():
			case <-time.After(hangGuard):
				t.Fatal("agent did not stop")
			}
			require.NoError(t, r.Err())
			require.GreaterOrEqual(t, w.start, before-int64(anchorSlack), "set before OnStart")
			require.Len(t, w.seen, w.cycles)
			last := w.start
			for i, v := range w.seen {
				require.NotZero(t, v, "cycle %d: DoWork saw the previous cycle's sentinel, the clock was not set", i)
				require.GreaterOrEqual(t, v, last, "cycle %d: the clock went back", i)
				require.LessOrEqual(t, v, w.after[i]+int64(aheadSlack), "cycle %d: ahead of clock.System", i)
				require.GreaterOrEqual(t, v, w.before[i]-int64(anchorSlack), "cycle %d: older than the previous cycle's end", i)
				last = v
			}
			require.Greater(t, last-w.start, int64(40*time.Millisecond), "30 sleeps of 1.5 ms passed")
		})
	}
}

// TestCachedClockIsMonotonicAcrossResyncs runs for several resync
// intervals with the clock read from another goroutine as well.
func TestCachedClockIsMonotonicAcrossResyncs(t *testing.T) {
	c := new(clock.Cached)
	var last int64
	var back error
	a := &fakeAgent{role: "resync", work: func(int64) (int, error) {
		v := c.Nanos()
		if v < last && back == nil {
			back = errors.New("the cached clock went back")
		}
		last = v
		return 0, nil
	}}
	r, err := New(a, WithIdle(idle.NoOp()), WithCachedClock(c))
	require.NoError(t, err)
	require.NoError(t, r.Start())
	deadline := clock.System.Nanos() + int64(20*clockResync)
	var readerLast int64
	for clock.System.Nanos() < deadline {
		v := c.Nanos()
		require.GreaterOrEqual(t, v, readerLast, "another goroutine saw the clock go back")
		readerLast = v
	}
	require.NoError(t, r.Close())
	require.NoError(t, back)
	require.Greater(t, a.cycles.Load(), int64(1))
}

func TestWithCachedClockRejectsNil(t *testing.T) {
	_, err := New(&fakeAgent{role: "x"}, WithCachedClock(nil))
	require.ErrorIs(t, err, ErrBadOption)
}

// TestDutyCycleWithCachedClockAllocatesNothing: as
// TestDutyCycleAllocatesNothing, with the cached clock set every cycle.
func TestDutyCycleWithCachedClockAllocatesNothing(t *testing.T) {
	for _, timed := range []bool{true, false} {
		a := &countdown{n: 100}
		c := new(clock.Cached)
		r, err := New(a, WithIdle(idle.BusySpin()), WithCachedClock(c), WithCycleTiming(timed))
		require.NoError(t, err)
		allocs := testing.AllocsPerRun(20, func() {
			a.left = a.n
			r.stop.Store(false)
			r.loop()
		})
		require.Zero(t, allocs, "timed %v: allocations per 100 duty cycles", timed)
		require.NotZero(t, c.Nanos(), "the loop set the clock")
		require.NoError(t, r.Close())
	}
}
