package clock

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeTime is a scripted pair of clocks. Each mono call returns mono and
// then adds the next step of script (or step), so a sample's window is
// under the test's control; wall returns mono's current value plus offset.
type fakeTime struct {
	mono, offset int64
	step         int64
	script       []int64
	monoCalls    int
	wallCalls    int
}

func (f *fakeTime) readMono() int64 {
	f.monoCalls++
	v := f.mono
	if len(f.script) > 0 {
		f.mono += f.script[0]
		f.script = f.script[1:]
	} else {
		f.mono += f.step
	}
	return v
}

func (f *fakeTime) readWall() int64 {
	f.wallCalls++
	return f.mono + f.offset
}

const unix2026 = int64(1_780_000_000) * int64(time.Second)

func newFake(cfg OffsetConfig) (*fakeTime, *Offset) {
	f := &fakeTime{mono: 1000, offset: unix2026}
	return f, newOffset(cfg, f.readMono, f.readWall)
}

func TestOffsetWithinToleranceOfTimeNow(t *testing.T) {
	o := NewOffset(OffsetConfig{})
	for range 100 {
		before := time.Now().UnixNano()
		got := o.EpochNanos()
		after := time.Now().UnixNano()
		// The sample pairs the wall reading with the middle of a window
		// of at most 250 ns (usually): allow that, and some scheduling.
		require.GreaterOrEqual(t, got, before-int64(50*time.Microsecond))
		require.LessOrEqual(t, got, after+int64(50*time.Microsecond))
		ms := o.EpochMillis()
		require.InDelta(t, time.Now().UnixMilli(), ms, 1)
	}
}

func TestOffsetExtrapolatesWithTheMonotonicClockOnly(t *testing.T) {
	f, o := newFake(OffsetConfig{})
	require.Equal(t, 1, f.wallCalls, "one sample, taken at once: its window is 0")
	f.mono += int64(500 * time.Millisecond)
	require.Equal(t, f.mono+unix2026, o.EpochNanos())
	require.Equal(t, (f.mono+unix2026)/int64(time.Millisecond), o.EpochMillis())
	require.Equal(t, 1, f.wallCalls, "no wall-clock read before CheckInterval")
}

func TestOffsetResamplesWhenTheWallClockStepsBack(t *testing.T) {
	f, o := newFake(OffsetConfig{})
	f.offset -= int64(10 * time.Second) // the wall clock is stepped back 10 s
	f.mono += int64(100 * time.Millisecond)
	require.Equal(t, f.mono+unix2026, o.EpochNanos(), "within CheckInterval the step is not seen")
	f.mono += int64(DefaultCheckInterval)
	require.Equal(t, f.mono+f.offset, o.EpochNanos(), "the check sees the step and resamples")
	require.Equal(t, 3, f.wallCalls, "sample, check, sample")
	f.mono += int64(time.Millisecond)
	require.Equal(t, f.mono+f.offset, o.EpochNanos())
	require.Equal(t, 3, f.wallCalls)
}

func TestOffsetResamplesWhenTheWallClockStepsForward(t *testing.T) {
	f, o := newFake(OffsetConfig{CheckInterval: time.Millisecond, MaxDrift: time.Microsecond})
	f.offset += int64(2 * time.Microsecond)
	f.mono += int64(time.Millisecond)
	require.Equal(t, f.mono+f.offset, o.EpochNanos())
}

func TestOffsetKeepsItsSampleWithinMaxDrift(t *testing.T) {
	f, o := newFake(OffsetConfig{})
	f.offset += int64(DefaultMaxDrift) // at the bound: not past it
	f.mono += int64(DefaultCheckInterval)
	require.Equal(t, f.mono+unix2026, o.EpochNanos(), "extrapolated, not resampled")
	require.Equal(t, 2, f.wallCalls, "sample, check")
	f.mono += int64(DefaultCheckInterval) / 2
	o.EpochNanos()
	require.Equal(t, 2, f.wallCalls, "the next check is a CheckInterval after the last")
	f.mono += int64(DefaultCheckInterval) / 2
	o.EpochNanos()
	require.Equal(t, 3, f.wallCalls)
}

func TestOffsetResamplesAfterResampleInterval(t *testing.T) {
	f, o := newFake(OffsetConfig{ResampleInterval: time.Minute, CheckInterval: time.Hour})
	f.mono += int64(time.Minute) - 1
	o.EpochNanos()
	require.Equal(t, 1, f.wallCalls, "the check waits for the resample interval, the shorter")
	f.mono++
	f.offset += 7 // a drift far below MaxDrift: resampled all the same
	require.Equal(t, f.mono+f.offset, o.EpochNanos())
	require.Equal(t, 2, f.wallCalls, "resampled without a separate check")
}

func TestOffsetSampleRetriesForANarrowWindow(t *testing.T) {
	f := &fakeTime{mono: 1000, offset: unix2026}
	// Windows (the step between the two mono reads of an attempt) of
	// 1000, 600 and 100 ns; between attempts time moves 10 ns.
	f.script = []int64{1000, 10, 600, 10, 100, 10}
	o := newOffset(OffsetConfig{}, f.readMono, f.readWall)
	require.Equal(t, 3, f.wallCalls, "stops at the first window below 250 ns")
	s := o.cur.Load()
	// Third attempt: m0 = 1000+1000+10+600+10 = 2620, wall read at 2720,
	// paired with the middle of [2620, 2720].
	require.Equal(t, int64(2670), s.mono)
	require.Equal(t, int64(2720)+unix2026, s.wall)
}

func TestOffsetSampleKeepsTheNarrowestWindow(t *testing.T) {
	f := &fakeTime{mono: 0, offset: unix2026}
	f.script = []int64{900, 0, 300, 0, 700, 0}
	f.step = 500 // every later window: 500 ns
	o := newOffset(OffsetConfig{SampleAttempts: 5}, f.readMono, f.readWall)
	require.Equal(t, 5, f.wallCalls, "no window below 250 ns: every attempt made")
	s := o.cur.Load()
	require.Equal(t, int64(900+150), s.mono, "the second attempt, the narrowest")
	require.Equal(t, int64(1200)+unix2026, s.wall)
}

func TestOffsetResampleOnDemand(t *testing.T) {
	f, o := newFake(OffsetConfig{})
	f.offset += int64(time.Hour)
	f.mono += 10
	o.Resample()
	require.Equal(t, f.mono+f.offset, o.EpochNanos())
}

// TestOffsetConcurrentReadersAcrossResamples runs readers while a
// resample happens on every check; -race checks the sample's publication.
func TestOffsetConcurrentReadersAcrossResamples(t *testing.T) {
	o := NewOffset(OffsetConfig{CheckInterval: time.Microsecond, MaxDrift: time.Nanosecond})
	done := make(chan struct{})
	for range 3 {
		go func() {
			defer func() { done <- struct{}{} }()
			// The reading is bracketed by two time.Now calls, so a
			// goroutine descheduled between the calls (a loaded machine)
			// widens the bracket instead of failing the check; the
			// millisecond is the sample's own error bound, generous.
			for range 2000 {
				before := time.Now().UnixNano()
				v := o.EpochNanos()
				after := time.Now().UnixNano()
				if v < before-int64(time.Millisecond) || v > after+int64(time.Millisecond) {
					t.Errorf("reading %d ns outside [%d, %d] of time.Now", v, before, after)
					return
				}
			}
		}()
	}
	for range 3 {
		<-done
	}
}

// TestOffsetHugeResampleIntervalDoesNotOverflow: a ResampleInterval of
// math.MaxInt64 (a caller's "never") must not wrap the next check time
// negative, which sent every reading down the slow path to read the wall
// clock.
func TestOffsetHugeResampleIntervalDoesNotOverflow(t *testing.T) {
	f, o := newFake(OffsetConfig{ResampleInterval: time.Duration(math.MaxInt64)})
	f.mono += int64(DefaultCheckInterval)
	require.Equal(t, f.mono+unix2026, o.EpochNanos())
	require.Equal(t, 2, f.wallCalls, "sample, check")
	for range 10 {
		f.mono += int64(time.Millisecond)
		require.Equal(t, f.mono+unix2026, o.EpochNanos())
	}
	require.Equal(t, 2, f.wallCalls, "the next check is a CheckInterval after the last")
}
