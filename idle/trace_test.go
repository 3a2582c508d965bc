package idle

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// recorder replaces the primitive actions with recorders for the duration
// of a test, so a trace is exact and takes no time.
type recorder struct{ ops []string }

func record(t *testing.T) *recorder {
	t.Helper()
	rec := &recorder{}
	spin, yield, prk := doSpin, doYield, doPark
	doSpin = func() { rec.ops = append(rec.ops, "spin") }
	doYield = func() { rec.ops = append(rec.ops, "yield") }
	doPark = func(d time.Duration) { rec.ops = append(rec.ops, "park "+d.String()) }
	t.Cleanup(func() { doSpin, doYield, doPark = spin, yield, prk })
	return rec
}

// take returns the ops recorded since the last take ("-" if none).
func (r *recorder) take() string {
	if len(r.ops) == 0 {
		return "-"
	}
	s := strings.Join(r.ops, ",")
	r.ops = r.ops[:0]
	return s
}

// backoffTrace lists, for each of n consecutive idle calls, the action taken
// and the state after it.
func backoffTrace(rec *recorder, b *backoffStrategy, n int) []string {
	out := make([]string, 0, n)
	for i := 1; i <= n; i++ {
		b.Idle(0)
		out = append(out, fmt.Sprintf("%d %s %s", i, rec.take(), b.State()))
	}
	return out
}

func TestBackoffExactTraceWithAgronaDefaults(t *testing.T) {
	rec := record(t)
	b := Backoff().(*backoffStrategy)
	require.Equal(t, StateNotIdle, b.State())
	want := []string{"1 - spinning"} // transition only
	for i := 2; i <= 10; i++ {
		want = append(want, fmt.Sprintf("%d spin spinning", i))
	}
	want = append(want, "11 spin yielding") // the 10th spin hint moves on
	for i := 12; i <= 16; i++ {
		want = append(want, fmt.Sprintf("%d yield yielding", i))
	}
	want = append(want, "17 - parking") // transition only
	for i, d := 18, time.Microsecond; i <= 27; i, d = i+1, d*2 {
		want = append(want, fmt.Sprintf("%d park %v parking", i, d))
	}
	for i := 28; i <= 31; i++ {
		want = append(want, fmt.Sprintf("%d park 1ms parking", i))
	}
	require.Equal(t, want, backoffTrace(rec, b, 31))
}

func TestBackoffResetsOnWorkAndOnReset(t *testing.T) {
	rec := record(t)
	b := Backoff().(*backoffStrategy)
	backoffTrace(rec, b, 30) // deep in parking
	require.Equal(t, StateParking, b.State())

	b.Idle(1) // work done: reset, no action
	require.Equal(t, "-", rec.take())
	require.Equal(t, StateNotIdle, b.State())
	require.Equal(t, defaultMinPark, b.parkPeriod())
	require.Equal(t, "1 - spinning", backoffTrace(rec, b, 1)[0], "starts over from NOT_IDLE")

	backoffTrace(rec, b, 30)
	b.Reset()
	require.Equal(t, StateNotIdle, b.State())
	require.Equal(t, "1 - spinning", backoffTrace(rec, b, 1)[0])

	// A negative work count is an error code: no work, so it idles.
	b.Idle(-5)
	require.Equal(t, "spin", rec.take())
}

func TestBackoffWithZeroLimitsSpinsOnceAndNeverYields(t *testing.T) {
	rec := record(t)
	s, err := NewBackoff(BackoffConfig{MaxSpins: 0, MaxYields: 0, MinPark: 3 * time.Microsecond, MaxPark: 10 * time.Microsecond})
	require.NoError(t, err)
	b := s.(*backoffStrategy)
	require.Equal(t, []string{
		"1 - spinning",
		"2 spin yielding",
		"3 - parking", // first yield call already exceeds 0 yields
		"4 park 3µs parking",
		"5 park 6µs parking",
		"6 park 10µs parking", // capped, not 12µs
		"7 park 10µs parking",
	}, backoffTrace(rec, b, 7))
}

func TestBackoffDoublingNeverOverflows(t *testing.T) {
	rec := record(t)
	s, err := NewBackoff(BackoffConfig{MinPark: time.Duration(1 << 61), MaxPark: time.Duration(1<<63 - 1)})
	require.NoError(t, err)
	b := s.(*backoffStrategy)
	tr := backoffTrace(rec, b, 8)
	require.Equal(t, fmt.Sprintf("4 park %v parking", time.Duration(1<<61)), tr[3])
	require.Equal(t, fmt.Sprintf("5 park %v parking", time.Duration(1<<62)), tr[4])
	require.Equal(t, fmt.Sprintf("6 park %v parking", time.Duration(1<<63-1)), tr[5])
	require.Equal(t, fmt.Sprintf("8 park %v parking", time.Duration(1<<63-1)), tr[7])
}

func TestNewBackoffRejectsBadLimits(t *testing.T) {
	for _, c := range []BackoffConfig{
		{MaxSpins: -1, MinPark: 1, MaxPark: 1},
		{MaxYields: -1, MinPark: 1, MaxPark: 1},
		{MinPark: 0, MaxPark: 1},
		{MinPark: 2, MaxPark: 1},
	} {
		_, err := NewBackoff(c)
		require.ErrorIs(t, err, ErrBadSpec, "%+v", c)
	}
}

// Each simple strategy: one action per idle call, none when work was done,
// and Reset only clears the reported state.
func TestSimpleStrategiesActionAndReset(t *testing.T) {
	rec := record(t)
	for _, tc := range []struct {
		s     Strategy
		op    string
		state State
	}{
		{NoOp(), "-", StateSpinning},
		{BusySpin(), "spin", StateSpinning},
		{Yielding(), "yield", StateYielding},
		{Sleeping(2 * time.Microsecond), "park 2µs", StateParking},
		{sleepingMillis(3), "park 3ms", StateParking},
	} {
		t.Run(tc.s.Alias(), func(t *testing.T) {
			sr := tc.s.(StateReporter)
			for range 3 {
				tc.s.Idle(0)
				require.Equal(t, tc.op, rec.take())
				require.Equal(t, tc.state, sr.State())
			}
			tc.s.IdleOnce()
			require.Equal(t, tc.op, rec.take())
			tc.s.Idle(7)
			require.Equal(t, "-", rec.take())
			require.Equal(t, StateNotIdle, sr.State())
			tc.s.Idle(0)
			rec.take()
			tc.s.Reset()
			require.Equal(t, "-", rec.take())
			require.Equal(t, StateNotIdle, sr.State())
			tc.s.Idle(0)
			require.Equal(t, tc.op, rec.take(), "no back-off: the same action after a reset")
		})
	}
}

func TestSleepingWithNonPositivePeriodDoesNotSleep(t *testing.T) {
	start := time.Now()
	s := Sleeping(0)
	for range 1000 {
		s.Idle(0)
	}
	Sleeping(-time.Second).Idle(0)
	require.Less(t, time.Since(start), time.Minute) // a hang guard, not a timing assertion
}

func TestControllableReadsTheWordOnEveryCall(t *testing.T) {
	rec := record(t)
	var word atomic.Int64
	c := Controllable(&word).(*controllableStrategy)
	for _, tc := range []struct {
		mode  int64
		op    string
		state State
	}{
		{0, "park 1µs", StateParking}, // never set
		{ModeNoOp, "-", StateSpinning},
		{ModeBusySpin, "spin", StateSpinning},
		{ModeYield, "yield", StateYielding},
		{ModePark, "park 1µs", StateParking},
		{99, "park 1µs", StateParking},
		{-1, "park 1µs", StateParking},
		{ModeBusySpin, "spin", StateSpinning},
	} {
		word.Store(tc.mode)
		c.Idle(0)
		require.Equal(t, tc.op, rec.take(), "mode %d", tc.mode)
		require.Equal(t, tc.state, c.State())
	}
	c.Idle(1)
	require.Equal(t, "-", rec.take())
	require.Equal(t, StateNotIdle, c.State())
	require.Panics(t, func() { Controllable(nil) })
	require.Equal(t, aliasControllable, c.Alias())
}

func TestBusySpinHintsPerStep(t *testing.T) {
	rec := record(t)
	one := BusySpin()
	one.Idle(0)
	require.Equal(t, "spin", rec.take())
	s, err := NewBusySpin(3)
	require.NoError(t, err)
	require.Equal(t, StateNotIdle, s.(StateReporter).State())
	s.Idle(0)
	require.Equal(t, "spin,spin,spin", rec.take())
	require.Equal(t, StateSpinning, s.(StateReporter).State())
	s.Idle(2) // work: no hint
	require.Equal(t, "-", rec.take())
	require.Equal(t, StateNotIdle, s.(StateReporter).State())
	s.IdleOnce()
	require.Equal(t, "spin,spin,spin", rec.take())
	s.Reset()
	require.Equal(t, StateNotIdle, s.(StateReporter).State())
	require.Equal(t, "spin:3", s.String())
	require.Equal(t, aliasBusySpin, s.Alias())

	for _, bad := range []int{0, -1, maxSpinHints + 1} {
		st, err := NewBusySpin(bad)
		require.ErrorIs(t, err, ErrBadSpec, "hints %d", bad)
		require.Nil(t, st)
	}
}
