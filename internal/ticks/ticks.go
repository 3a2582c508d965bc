package ticks

import (
	"math"
	"sync/atomic"
	"time"
)

// CalibrationSpan is how long after start Nanos keeps the TSC rate it
// measured instead of measuring it again on every call.
const CalibrationSpan = 50 * time.Millisecond

// maxSkew is the longest the two readings of a pair (a TSC reading and a
// monotonic one) may be apart; a pair further apart (the thread was
// preempted between them) is read again.
const maxSkew = 10 * time.Microsecond

var (
	// epoch and baseTicks are read together when the package starts (init):
	// the origin of Now's fallback readings and of the rate's calibration.
	epoch     time.Time
	baseTicks int64

	// nsPerTick holds math.Float64bits of the calibrated rate, 0 until
	// CalibrationSpan has passed. Any goroutine may store it; all store
	// nearly the same value.
	nsPerTick atomic.Uint64
)

func init() {
	epoch = time.Now()
	if !useTSC {
		return
	}
	for range 100 {
		e := time.Now()
		t := rdtsc()
		if time.Since(e) < maxSkew {
			epoch, baseTicks = e, t
			return
		}
	}
	epoch, baseTicks = time.Now(), rdtsc()
}

// Now returns the current reading, in ticks. Only differences of readings
// mean anything; convert them with Nanos.
func Now() int64 {
	if useTSC {
		return rdtsc()
	}
	return int64(time.Since(epoch))
}

// Nanos converts a number of ticks (a difference of two Now readings) to
// nanoseconds.
func Nanos(d int64) int64 {
	if !useTSC {
		return d
	}
	if r := nsPerTick.Load(); r != 0 {
		return int64(float64(d) * math.Float64frombits(r))
	}
	return int64(float64(d) * rate())
}

// rate measures the ns per tick since start, and keeps it once the span is
// long enough.
func rate() float64 {
	t, elapsed := pair()
	dt := t - baseTicks
	if dt <= 0 || elapsed <= 0 {
		return 1 // not reached with a usable TSC (detect checks it advances)
	}
	r := float64(elapsed) / float64(dt)
	if elapsed >= CalibrationSpan {
		nsPerTick.Store(math.Float64bits(r))
	}
	return r
}

// pair reads the TSC and the time since epoch together (see maxSkew).
func pair() (int64, time.Duration) {
	var t int64
	var elapsed time.Duration
	for range 100 {
		before := time.Since(epoch)
		t = rdtsc()
		elapsed = time.Since(epoch)
		if elapsed-before < maxSkew {
			return t, before + (elapsed-before)/2
		}
	}
	return t, elapsed
}

// Source names the clock behind Now: "tsc" or "monotonic".
func Source() string {
	if useTSC {
		return "tsc"
	}
	return "monotonic"
}
