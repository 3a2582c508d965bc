package runner

import (
	"errors"
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
	require.Equal(t, []shown{
		{countertype.DutyCycles, "duty-cycles: live", 0},
		{countertype.TotalWork, "total-work: live", 0},
		{countertype.Errors, "errors: live", 0},
		{countertype.LongestCycleNs, "longest-cycle-ns: live", 0},
		{countertype.IdleCycles, "idle-cycles: live", 0},
	}, readAll(t, rd), "allocated by New, under the documented labels and type ids")
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
