package clock

import (
	"math"
	"sync/atomic"
	"time"
)

// Defaults of OffsetConfig.
const (
	DefaultSampleAttempts   = 100
	DefaultSampleWindow     = 250 * time.Nanosecond
	DefaultResampleInterval = time.Hour
	DefaultCheckInterval    = time.Second
	DefaultMaxDrift         = time.Millisecond
)

// OffsetConfig tunes an Offset. Zero fields take the defaults.
type OffsetConfig struct {
	// SampleAttempts bounds the tries for a narrow sample (default 100).
	SampleAttempts int
	// SampleWindow is the width below which a sample is taken at once
	// (default 250 ns): the time between the two monotonic readings that
	// bracket the wall-clock reading.
	SampleWindow time.Duration
	// ResampleInterval is how long a sample is used (default 1 h).
	ResampleInterval time.Duration
	// CheckInterval is how often a reading is compared with the wall clock
	// (default 1 s).
	CheckInterval time.Duration
	// MaxDrift is how far the wall clock may move away from the sample's
	// extrapolation, either way, before a check resamples (default 1 ms).
	MaxDrift time.Duration
}

// Offset is a wall clock in nanoseconds since the Unix epoch that reads
// only the monotonic clock (Agrona's OffsetEpochNanoClock). It samples the
// wall clock together with the monotonic clock once, then returns
// sample's wall time + monotonic time elapsed since the sample.
//
// Why in Go, where time.Now already carries a monotonic reading:
// time.Now().UnixNano() reads two clocks (the wall clock and the monotonic
// one, two vDSO clock_gettime calls on Linux), Offset reads one (the
// monotonic clock, as time.Since does) plus two loads and a compare, so it
// is the cheaper reading (docs/clock.md, "Costs";
// BenchmarkOffsetEpochNanos against BenchmarkSystemEpochNanos).
//
// The price: between samples the reading follows the monotonic clock, not
// the wall clock. Both are slewed alike by NTP on Linux, so they only part
// when the wall clock is stepped (settimeofday, an NTP step, a VM restored
// from a snapshot). Offset notices at its next check: at most once per
// CheckInterval, a reading also reads the wall clock and, if the two
// differ by more than MaxDrift either way, takes a new sample. It also
// resamples after ResampleInterval. After a resample the reading may go
// backwards, as the wall clock did: Offset is not monotonic; use Nano for
// durations.
//
// A sample reads the monotonic clock, the wall clock, the monotonic clock
// again, and pairs the wall reading with the midpoint, retrying (up to
// SampleAttempts) until the two monotonic readings are closer than
// SampleWindow; otherwise the narrowest is kept. A reading never allocates;
// a resample allocates one small object.
//
// Safe for concurrent use by any number of goroutines.
type Offset struct {
	cfg  OffsetConfig
	cur  atomic.Pointer[offsetSample]
	mono func() int64 // monotonic ns, System.Nanos; tests inject their own
	wall func() int64 // wall ns since the Unix epoch
}

// offsetSample is a wall reading and the monotonic reading taken with it.
// Immutable but for next.
type offsetSample struct {
	wall, mono int64
	// next is the monotonic time of the next wall-clock check; the fast
	// path is taken below it.
	next atomic.Int64
}

var (
	_ EpochNano = (*Offset)(nil)
	_ Epoch     = (*Offset)(nil)
)

// NewOffset samples the clocks and returns an Offset.
func NewOffset(cfg OffsetConfig) *Offset {
	return newOffset(cfg, System.Nanos, System.EpochNanos)
}

func newOffset(cfg OffsetConfig, mono, wall func() int64) *Offset {
	if cfg.SampleAttempts <= 0 {
		cfg.SampleAttempts = DefaultSampleAttempts
	}
	if cfg.SampleWindow <= 0 {
		cfg.SampleWindow = DefaultSampleWindow
	}
	if cfg.ResampleInterval <= 0 {
		cfg.ResampleInterval = DefaultResampleInterval
	}
	if cfg.CheckInterval <= 0 {
		cfg.CheckInterval = DefaultCheckInterval
	}
	if cfg.MaxDrift <= 0 {
		cfg.MaxDrift = DefaultMaxDrift
	}
	o := &Offset{cfg: cfg, mono: mono, wall: wall}
	o.resample()
	return o
}

// EpochNanos returns the nanoseconds since the Unix epoch.
func (o *Offset) EpochNanos() int64 {
	s := o.cur.Load() // before the monotonic reading: m >= s.mono
	m := o.mono()
	if m < s.next.Load() {
		return s.wall + (m - s.mono)
	}
	return o.check(s, m)
}

// EpochMillis returns the milliseconds since the Unix epoch.
func (o *Offset) EpochMillis() int64 { return o.EpochNanos() / int64(time.Millisecond) }

// check is the slow path of a reading at monotonic time m under sample s:
// compare with the wall clock, resample if needed.
func (o *Offset) check(s *offsetSample, m int64) int64 {
	est := s.wall + (m - s.mono)
	if m-s.mono < int64(o.cfg.ResampleInterval) {
		drift := o.wall() - est
		if drift <= int64(o.cfg.MaxDrift) && drift >= -int64(o.cfg.MaxDrift) {
			s.next.Store(min(addSat(m, int64(o.cfg.CheckInterval)), addSat(s.mono, int64(o.cfg.ResampleInterval))))
			return est
		}
	}
	n := o.resample()
	return n.wall + (o.mono() - n.mono)
}

// Resample takes a new sample now, whatever the intervals: for a caller
// that knows the wall clock was just stepped. Concurrent readers see either
// sample.
func (o *Offset) Resample() { o.resample() }

func (o *Offset) resample() *offsetSample {
	best := int64(-1)
	s := &offsetSample{}
	for range o.cfg.SampleAttempts {
		m0 := o.mono()
		w := o.wall()
		m1 := o.mono()
		if win := m1 - m0; best < 0 || win < best {
			best = win
			s.wall, s.mono = w, m0+win/2
			if win < int64(o.cfg.SampleWindow) {
				break
			}
		}
	}
	s.next.Store(addSat(s.mono, min(int64(o.cfg.CheckInterval), int64(o.cfg.ResampleInterval))))
	o.cur.Store(s)
	return s
}

// addSat returns a+d for d > 0, saturated at math.MaxInt64: an interval
// of math.MaxInt64 ("never") must not wrap a next-check time negative.
func addSat(a, d int64) int64 {
	if a > math.MaxInt64-d {
		return math.MaxInt64
	}
	return a + d
}
