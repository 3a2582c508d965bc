package runner

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/agent"
	ipccounters "github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/internal/countertype"
)

func newCountersManager(t *testing.T, n int, reuse time.Duration) (*ipccounters.Manager, *ipccounters.Reader) {
	t.Helper()
	meta, vals, err := ipccounters.NewRegions(n)
	require.NoError(t, err)
	m, err := ipccounters.NewManager(meta, vals, ipccounters.Config{FreeToReuseTimeout: reuse})
	require.NoError(t, err)
	r, err := ipccounters.NewReader(meta, vals)
	require.NoError(t, err)
	return m, r
}

// available counts the ids m can allocate now: all but the allocated ones
// (the managers here reuse freed ids at once).
func available(t *testing.T, m *ipccounters.Manager) int {
	t.Helper()
	n := m.Reader().MaxCounterID() + 1
	require.NoError(t, m.Reader().ForEachRecord(func(ipccounters.Record) bool { n--; return true }))
	return n
}

type shown struct {
	typeID int32
	label  string
	value  int64
}

func readAll(t *testing.T, r *ipccounters.Reader) []shown {
	t.Helper()
	var out []shown
	require.NoError(t, r.ForEachRecord(func(rec ipccounters.Record) bool {
		typeID, label, value := rec.TypeID, string(rec.Label), rec.Value
		out = append(out, shown{typeID, label, value})
		return true
	}))
	return out
}

// TestStatsCountersMirrorRunner: a runner whose agent does 3 units of work
// per cycle and fails every 10th cycle stops itself after 100 000 cycles; its
// published counters then equal its final Stats exactly, under the
// documented labels and type ids. Published values seen while it runs
// never go backwards and never run ahead of Stats.
func TestStatsCountersMirrorRunner(t *testing.T) {
	m, rd := newCountersManager(t, 8, 0)
	a := &fakeAgent{role: "gateway", work: func(c int64) (int, error) {
		if c >= 100_000 {
			return 0, agent.ErrDone
		}
		if c%10 == 0 {
			return 0, errors.New("every tenth")
		}
		return 3, nil
	}}
	var handled errs
	r, err := New(a, WithIdle(idle.BusySpin()), WithErrorHandler(handled.handle))
	require.NoError(t, err)
	s, err := NewStatsCounters(m, r)
	require.NoError(t, err)
	require.Equal(t, []shown{
		{countertype.DutyCycles, "duty-cycles: gateway", 0},
		{countertype.TotalWork, "total-work: gateway", 0},
		{countertype.Errors, "errors: gateway", 0},
		{countertype.LongestCycleNs, "longest-cycle-ns: gateway", 0},
		{countertype.IdleCycles, "idle-cycles: gateway", 0},
	}, readAll(t, rd))

	require.NoError(t, r.Start())
	cyc, work, errc, maxc := s.cycles, s.work, s.errs, s.maxCycle
	var last [4]int64
	deadline := time.Now().Add(hangGuard)
	for done := false; !done; {
		select {
		case <-r.Done():
			done = true
		default:
			require.True(t, time.Now().Before(deadline), "agent did not finish")
		}
		before := r.Stats()
		s.Publish()
		after := r.Stats()
		got := [4]int64{cyc.Get(), work.Get(), errc.Get(), maxc.Get()}
		for i, lo := range [4]int64{before.DutyCycles, before.TotalWork, before.Errors, int64(before.MaxCycle)} {
			require.GreaterOrEqual(t, got[i], lo, "counter %d behind the stats read before Publish", i)
			require.GreaterOrEqual(t, got[i], last[i], "counter %d went backwards", i)
		}
		for i, hi := range [4]int64{after.DutyCycles, after.TotalWork, after.Errors, int64(after.MaxCycle)} {
			require.LessOrEqual(t, got[i], hi, "counter %d ahead of the stats read after Publish", i)
		}
		last = got
	}
	require.NoError(t, r.Close())
	require.NoError(t, s.Close(), "publishes the final values, then frees")

	st := r.Stats()
	require.Equal(t, int64(100_000), st.DutyCycles) // the last, which stopped the loop, counts
	require.Equal(t, int64(9_999), st.Errors)
	require.Equal(t, int64(3*(99_999-9_999)), st.TotalWork)
	require.Positive(t, st.MaxCycle)
	// The final values stay readable in the freed (reclaimed) records.
	for i, want := range []int64{st.DutyCycles, st.TotalWork, st.Errors, int64(st.MaxCycle)} {
		rec, err := rd.Record(i)
		require.NoError(t, err)
		require.Equal(t, ipccounters.StateReclaimed, rec.State)
		v, err := rd.Value(i)
		require.NoError(t, err)
		require.Equal(t, want, v, "counter %d", i)
	}
	require.Empty(t, readAll(t, rd), "freed counters are not listed")
	require.Len(t, handled.list, 9_999)
}

// TestStatsCountersClose: Close is idempotent, frees the five ids, and a
// Publish afterwards does not write into counters that reuse them.
func TestStatsCountersClose(t *testing.T) {
	m, rd := newCountersManager(t, 5, 0)
	a := &fakeAgent{role: "r", work: func(int64) (int, error) { return 1, nil }}
	r, err := New(a, WithIdle(idle.BusySpin()))
	require.NoError(t, err)
	s, err := NewStatsCounters(m, r)
	require.NoError(t, err)
	require.Zero(t, available(t, m))
	require.NoError(t, r.Start())
	require.NoError(t, r.Close())
	require.NoError(t, s.Close())
	require.NoError(t, s.Close())
	require.Equal(t, 5, available(t, m))

	others := make([]*ipccounters.Counter, 5)
	for i := range others {
		others[i], err = m.Allocate("other", countertype.UserMin, nil)
		require.NoError(t, err)
		others[i].Set(-5)
	}
	s.Publish()
	for i := range others {
		v, err := rd.Value(others[i].ID())
		require.NoError(t, err)
		require.Equal(t, int64(-5), v, "Publish after Close wrote into a reused id")
	}
}

// TestStatsCountersErrors: bad arguments, and a manager too small for the
// five counters (nothing stays allocated).
func TestStatsCountersErrors(t *testing.T) {
	m, _ := newCountersManager(t, 4, 0)
	r, err := New(&fakeAgent{role: "x"})
	require.NoError(t, err)
	defer r.Close()
	_, err = NewStatsCounters(nil, r)
	require.ErrorIs(t, err, ErrBadOption)
	_, err = NewStatsCounters(m, nil)
	require.ErrorIs(t, err, ErrBadOption)
	_, err = NewStatsCounters(m, r)
	require.ErrorIs(t, err, ipccounters.ErrFull)
	require.Equal(t, 4, available(t, m), "the four allocated counters were freed")
}

// TestStatsCountersPublishAllocatesNothing: Publish is allocation-free.
func TestStatsCountersPublishAllocatesNothing(t *testing.T) {
	m, _ := newCountersManager(t, 5, 0)
	r, err := New(&fakeAgent{role: "a"})
	require.NoError(t, err)
	defer r.Close()
	s, err := NewStatsCounters(m, r)
	require.NoError(t, err)
	defer s.Close()
	require.Zero(t, testing.AllocsPerRun(1000, s.Publish))
}

// ExampleNewStatsCounters mirrors a runner's statistics into counters
// (here on the heap; normally an ipc counters file that cmd/dutystat reads).
func ExampleNewStatsCounters() {
	meta, vals, _ := ipccounters.NewRegions(16)
	m, _ := ipccounters.NewManager(meta, vals, ipccounters.Config{})

	r, _ := New(&fakeAgent{role: "gateway", work: func(cycle int64) (int, error) { // any agent.Agent
		if cycle > 5 {
			return 0, agent.ErrDone
		}
		return 2, nil
	}})
	s, _ := NewStatsCounters(m, r)
	_ = r.Start()
	<-r.Done()
	_ = s.Close() // publishes the final values, then frees the counters

	rd, _ := ipccounters.NewReader(meta, vals)
	for id := range 3 {
		rec, _ := rd.Record(id) // freed, but its label and last value stay
		fmt.Println(string(rec.Label), rec.Value)
	}
	// Output:
	// duty-cycles: gateway 6
	// total-work: gateway 10
	// errors: gateway 0
}

// TestWithCountersKeepsSharedCountersLive: with WithCounters the duty cycle
// itself updates the shared words, so a reader sees progress while the agent
// runs (no publisher), the final values equal Stats, and the counters are
// freed once the agent has stopped.
func TestWithCountersKeepsSharedCountersLive(t *testing.T) {
	m, rd := newCountersManager(t, 8, 0)
	release := make(chan struct{})
	a := &fakeAgent{role: "live", work: func(c int64) (int, error) {
		if c == 5 {
			return 0, errors.New("fifth")
		}
		select {
		case <-release:
			if c >= 1000 {
				return 0, agent.ErrDone
			}
		default:
		}
		return 2, nil
	}}
	r, err := New(a, WithIdle(idle.BusySpin()), WithErrorHandler(func(error) {}), WithCounters(m))
	require.NoError(t, err)
	require.Len(t, readAll(t, rd), 5, "allocated by New")
	require.NoError(t, r.Start())
	require.Eventually(t, func() bool {
		for _, s := range readAll(t, rd) {
			if s.label == "duty-cycles: live" && s.value > 100 {
				return true
			}
		}
		return false
	}, 10*time.Second, time.Millisecond, "the loop updates the shared counter while it runs")
	var seen map[string]int64
	require.Eventually(t, func() bool {
		seen = map[string]int64{}
		for _, s := range readAll(t, rd) {
			seen[s.label] = s.value
		}
		return seen["errors: live"] == 1
	}, 10*time.Second, time.Millisecond)
	close(release)
	<-r.Done()
	require.Empty(t, readAll(t, rd), "freed when the agent stopped")
	st := r.Stats()
	require.Equal(t, int64(1), st.Errors)
	require.Positive(t, st.DutyCycles)

	_, err = New(a, WithCounters(nil))
	require.ErrorIs(t, err, ErrBadOption)
	small, _ := newCountersManager(t, 2, 0)
	_, err = New(a, WithCounters(small))
	require.ErrorIs(t, err, ipccounters.ErrFull)
	require.Equal(t, 2, available(t, small), "a failed New frees what it allocated")

	// Closed before start: freed too.
	m2, rd2 := newCountersManager(t, 8, 0)
	r2, err := New(&fakeAgent{role: "never", work: func(int64) (int, error) { return 0, nil }}, WithCounters(m2))
	require.NoError(t, err)
	require.NoError(t, r2.Close())
	require.Empty(t, readAll(t, rd2))
}

// Live counters are "freed when the agent has stopped"; after a failed
// OnStart the agent has stopped (Done is closed), and the four counters
// stayed allocated forever (a later Close did not free them either).
func TestLiveCountersFreedAfterFailedStart(t *testing.T) {
	m, rd := newCountersManager(t, 8, 0)
	a := &fakeAgent{role: "bad", start: func() error { return errors.New("no") }}
	r, err := New(a, WithCounters(m), WithErrorHandler(func(error) {}))
	require.NoError(t, err)
	require.Error(t, r.Start())
	<-r.Done()
	require.NoError(t, r.Close())
	require.Empty(t, readAll(t, rd), "counters of a stopped agent must be freed")

	// A goroutine that exits in DoWork frees them too.
	m2, rd2 := newCountersManager(t, 8, 0)
	gx := &fakeAgent{role: "gx", work: func(int64) (int, error) { runtime.Goexit(); return 0, nil }}
	r2, err := New(gx, WithCounters(m2), WithErrorHandler(func(error) {}))
	require.NoError(t, err)
	require.NoError(t, r2.Start())
	waitDone(t, r2)
	require.Empty(t, readAll(t, rd2))
}
