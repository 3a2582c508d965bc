package ticks

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSourceMatchesTheSystem checks detection against what Linux itself
// uses and reports: the TSC exactly when the kernel's clocksource is the
// TSC and /proc/cpuinfo lists an invariant one.
func TestSourceMatchesTheSystem(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		require.Equal(t, "monotonic", Source())
		return
	}
	cs, err1 := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	info, err2 := os.ReadFile("/proc/cpuinfo")
	if err1 != nil || err2 != nil {
		t.Skip("no /sys or /proc to compare with")
	}
	invariant := strings.Contains(string(info), " constant_tsc") && strings.Contains(string(info), " nonstop_tsc")
	want := "monotonic"
	if strings.TrimSpace(string(cs)) == "tsc" && invariant {
		want = "tsc"
	}
	require.Equal(t, want, Source())
}

// bracket measures span both ways: in ticks converted by Nanos, and
// between two pairs of monotonic readings around the tick readings, which
// bound the true interval from below and above whatever the scheduler did.
func bracket(span time.Duration) (got, lo, hi int64) {
	a0 := time.Now()
	t0 := Now()
	b0 := time.Now()
	time.Sleep(span)
	a1 := time.Now()
	t1 := Now()
	b1 := time.Now()
	return Nanos(t1 - t0), int64(a1.Sub(b0)), int64(b1.Sub(a0))
}

// requireAgrees checks that Nanos agrees with the monotonic clock over a
// sleep, to 0.2% plus a microsecond (the rate's error before calibration is
// the skew of two readings over the time since start; see doc.go).
func requireAgrees(t *testing.T, span time.Duration) {
	t.Helper()
	got, lo, hi := bracket(span)
	require.GreaterOrEqual(t, got, lo-lo/500-1000, "Nanos %d ns, monotonic between %d and %d", got, lo, hi)
	require.LessOrEqual(t, got, hi+hi/500+1000, "Nanos %d ns, monotonic between %d and %d", got, lo, hi)
}

func TestNanosAgreesWithTheMonotonicClock(t *testing.T) {
	requireAgrees(t, 20*time.Millisecond)
	// After CalibrationSpan the rate is kept; it must agree as well.
	if d := CalibrationSpan - time.Since(epoch); d > 0 {
		time.Sleep(d)
	}
	requireAgrees(t, 20*time.Millisecond)
	if useTSC {
		require.NotZero(t, nsPerTick.Load(), "the rate is kept after CalibrationSpan")
	}
}

func TestNowNeverGoesBack(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	last := Now()
	for range 100_000 {
		now := Now()
		require.GreaterOrEqual(t, now, last)
		last = now
	}
}

func TestNanosOfZeroAndNegative(t *testing.T) {
	require.Zero(t, Nanos(0))
	require.Less(t, Nanos(-1000), int64(0), "a negative span stays negative; callers compare, they do not panic")
}

func TestAllocatesNothing(t *testing.T) {
	var sink int64
	require.Zero(t, testing.AllocsPerRun(1000, func() { sink += Now() }))
	require.Zero(t, testing.AllocsPerRun(1000, func() { sink += Nanos(sink & 0xffff) }))
}

var sink int64

// BenchmarkNow against the clock read it replaces (time.Since of an epoch,
// what the runner read before).
func BenchmarkNow(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		sink += Now()
	}
}

func BenchmarkTimeSince(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		sink += int64(time.Since(epoch))
	}
}

func BenchmarkNanos(b *testing.B) {
	b.ReportAllocs()
	for i := range b.N {
		sink += Nanos(int64(i))
	}
}
