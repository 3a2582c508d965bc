package histogram

import (
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Snapshot is a copy of a histogram: Reader.Snapshot fills it with the
// cumulative counts since the Recorder started, Sub turns it into the
// counts of an interval. Counts is laid out as hdrhistogram-go lays out
// its counts for the same Config.
type Snapshot struct {
	// Label and Config identify the histogram.
	Label  string
	Config Config
	// TotalCount is the sum of Counts.
	TotalCount int64
	// Min and Max bound the values counted: a cumulative snapshot gives the
	// exact smallest and largest values recorded (at the bounds when
	// clamped), an interval (Sub) the bounds of its lowest and highest
	// non-empty buckets, as hdrhistogram's Min and Max do. 0 when empty.
	Min, Max int64
	// Clamped is how many of the values counted were outside [Lowest,
	// Highest] and recorded at the bound.
	Clamped int64
	// StartMillis is when the Recorder started, in ms since the Unix epoch.
	StartMillis int64
	// Counts is the count of each HdrHistogram counts index.
	Counts []int64
}

// CopyTo makes dst a copy of s, reusing dst.Counts.
func (s *Snapshot) CopyTo(dst *Snapshot) {
	counts := dst.Counts
	if cap(counts) < len(s.Counts) {
		counts = make([]int64, len(s.Counts))
	}
	*dst = *s
	dst.Counts = counts[:len(s.Counts)]
	copy(dst.Counts, s.Counts)
}

// Sub makes s the interval from prev to s: the values recorded after prev
// was taken and up to s. prev must be an earlier snapshot of the same
// histogram (same label, config and counts length, no count larger than
// s's), otherwise Sub returns an error wrapping ErrArgument and leaves s
// unchanged. Min and Max of the interval come from its counts; Label,
// Config and StartMillis stay s's. Sub does not allocate.
func (s *Snapshot) Sub(prev *Snapshot) error {
	if s.Label != prev.Label || s.Config != prev.Config || len(s.Counts) != len(prev.Counts) {
		return fmt.Errorf("%w: %q %+v (%d counts) minus %q %+v (%d counts)", ErrArgument,
			s.Label, s.Config, len(s.Counts), prev.Label, prev.Config, len(prev.Counts))
	}
	if s.Clamped < prev.Clamped || s.TotalCount < prev.TotalCount {
		return fmt.Errorf("%w: %q: the snapshot subtracted is later (total %d, clamped %d; receiver %d, %d)",
			ErrArgument, s.Label, prev.TotalCount, prev.Clamped, s.TotalCount, s.Clamped)
	}
	for i, c := range prev.Counts {
		if c > s.Counts[i] {
			return fmt.Errorf("%w: %q: the snapshot subtracted is later (index %d: %d > %d)", ErrArgument, s.Label, i, c, s.Counts[i])
		}
	}
	var sum int64
	first, last := -1, -1
	for i, c := range prev.Counts {
		d := s.Counts[i] - c
		s.Counts[i] = d
		if d != 0 {
			if first < 0 {
				first = i
			}
			last = i
			sum += d
		}
	}
	s.TotalCount = sum
	s.Clamped -= prev.Clamped
	s.Min, s.Max = 0, 0
	if g, err := newGeometry(s.Config); err == nil && first >= 0 {
		s.Min = g.lowestEquivalent(g.valueAt(first))
		s.Max = g.highestEquivalent(g.valueAt(last))
	}
	return nil
}

// ValueAtQuantile returns the value at quantile q (0..100, a percentile,
// as hdrhistogram's ValueAtQuantile takes it): the highest value
// equivalent to the value at rank q% of TotalCount, or the lowest for
// q == 0. q is clamped to 0..100; an empty snapshot gives 0. It gives
// exactly what Histogram().ValueAtQuantile(q) gives, without allocating.
func (s *Snapshot) ValueAtQuantile(q float64) int64 {
	g, err := newGeometry(s.Config)
	if err != nil || s.TotalCount <= 0 {
		return 0
	}
	if q > 100 {
		q = 100
	} else if q < 0 {
		q = 0
	}
	// The rank of q: rounded to the nearest count, at least the first and
	// at most the last (a NaN q ranks first).
	rank := s.TotalCount
	if f := q/100*float64(s.TotalCount) + 0.5; !(f >= 1) {
		rank = 1
	} else if f < float64(s.TotalCount) {
		rank = int64(f)
	}
	var v, seen int64
	for i, c := range s.Counts {
		if seen += c; seen >= rank {
			v = g.valueAt(i)
			break
		}
	}
	if q == 0 {
		return g.lowestEquivalent(v)
	}
	return g.highestEquivalent(v)
}

// Mean returns the mean of the values counted, each taken at the middle of
// its bucket, as hdrhistogram's Mean computes it; 0 when empty.
func (s *Snapshot) Mean() float64 {
	g, err := newGeometry(s.Config)
	if err != nil || s.TotalCount <= 0 {
		return 0
	}
	total := float64(s.TotalCount)
	var mean float64
	for i, c := range s.Counts {
		if c != 0 {
			// Same operations in the same order as hdrhistogram, so that the
			// two agree to the last bit.
			mean += float64(c) * float64(g.medianEquivalent(g.valueAt(i))) / total
		}
	}
	return mean
}

// Histogram returns s as a new hdrhistogram.Histogram (hdrhistogram.Import
// of its counts), tagged with the label and started at StartMillis, for
// what this package does not do: percentile distributions, encoding,
// merging. It allocates.
func (s *Snapshot) Histogram() *hdrhistogram.Histogram {
	h := hdrhistogram.Import(&hdrhistogram.Snapshot{
		LowestTrackableValue:  s.Config.Lowest,
		HighestTrackableValue: s.Config.Highest,
		SignificantFigures:    int64(s.Config.SignificantFigures),
		Counts:                s.Counts,
	})
	h.SetTag(s.Label)
	h.SetStartTimeMs(s.StartMillis)
	return h
}
