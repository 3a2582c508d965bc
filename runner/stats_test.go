package runner

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/idle"
)

func TestStatsCountCyclesWorkIdleAndStalls(t *testing.T) {
	a := &fakeAgent{role: "counted"}
	a.work = func(cycle int64) (int, error) {
		switch {
		case cycle == 7:
			time.Sleep(5 * time.Millisecond) // a stall the tracker must notice
			return 3, nil
		case cycle == 20:
			return 0, agent.ErrDone
		case cycle%2 == 0:
			return 0, nil
		case cycle%5 == 0:
			return -1, nil // an error code: no work
		}
		return 2, nil
	}
	r, err := New(a, WithIdle(idle.NoOp()))
	require.NoError(t, err)
	before := r.Stats()
	require.Equal(t, Stats{Role: "counted"}, before)
	require.NoError(t, r.Start())
	waitDone(t, r)
	st := r.Stats()
	// Odd cycles 1..19 except 5 and 15 do 2 units, cycle 7 does 3: 8 cycles with work.
	require.Equal(t, int64(20), st.DutyCycles)
	require.Equal(t, int64(7*2+3), st.TotalWork)
	require.Equal(t, int64(12), st.IdleCycles)
	require.Zero(t, st.Errors)
	require.GreaterOrEqual(t, st.MaxCycle, 5*time.Millisecond)
	require.False(t, st.Running)
	require.Equal(t, idle.StateSpinning, st.IdleState, "the last cycle idled")
}

func TestStatsReadWhileRunning(t *testing.T) {
	a := &fakeAgent{role: "live"}
	a.work = func(cycle int64) (int, error) { return int(cycle % 2), nil }
	s := idle.Backoff()
	r, err := New(a, WithIdle(s))
	require.NoError(t, err)
	require.NoError(t, r.Start())
	var last int64
	for range 100 { // concurrent reads, checked by -race
		st := r.Stats()
		require.True(t, st.Running)
		require.GreaterOrEqual(t, st.DutyCycles, last)
		last = st.DutyCycles
	}
	waitFor(t, func() bool { return r.Stats().DutyCycles > 1000 })
	require.NoError(t, r.Close())
}

func TestIdleStateReportsParkingWhenIdle(t *testing.T) {
	r, err := New(&fakeAgent{role: "sleepy"}, WithIdle(idle.Backoff()))
	require.NoError(t, err)
	require.NoError(t, r.Start())
	waitFor(t, func() bool { return r.Stats().IdleState == idle.StateParking })
	require.NoError(t, r.Close())
}

// Stats never torn negative while running.
func TestStatsNeverNegativeWhileRunning(t *testing.T) {
	a := &fakeAgent{role: "st", work: func(c int64) (int, error) { return int(c % 2), nil }}
	r, err := New(a, WithIdle(idle.NoOp()))
	require.NoError(t, err)
	require.NoError(t, r.Start())
	deadline := time.Now().Add(200 * time.Millisecond)
	for time.Now().Before(deadline) {
		st := r.Stats()
		require.GreaterOrEqual(t, st.IdleCycles, int64(0))
		require.GreaterOrEqual(t, st.DutyCycles, st.IdleCycles)
	}
	require.NoError(t, r.Close())
}
