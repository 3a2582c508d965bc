package histogram

import (
	"math"
	"math/rand/v2"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/require"
)

// configs covers every significant figure, units above 1, Lowest values
// just below large powers of two (where hdrhistogram-go's float log2
// rounds up), and Highest up to math.MaxInt64.
var configs = []Config{
	{Lowest: 1, Highest: 2, SignificantFigures: 1},
	{Lowest: 1, Highest: 1000, SignificantFigures: 1},
	{Lowest: 1, Highest: 3_600_000_000, SignificantFigures: 2},
	ns,
	{Lowest: 1000, Highest: 60_000_000_000, SignificantFigures: 3},
	{Lowest: 7, Highest: 1 << 20, SignificantFigures: 4},
	{Lowest: 1, Highest: 1 << 19, SignificantFigures: 5},
	{Lowest: 1, Highest: math.MaxInt64, SignificantFigures: 3},
	{Lowest: 1 << 20, Highest: math.MaxInt64, SignificantFigures: 2},
	{Lowest: 1<<50 - 1, Highest: math.MaxInt64, SignificantFigures: 1},
	{Lowest: 1<<55 - 1, Highest: math.MaxInt64, SignificantFigures: 1},
}

var quantiles = []float64{0, 0.1, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 99.999, 100, -1, 101, math.NaN()}

// values returns n values spread log-uniformly over [cfg.Lowest/2,
// cfg.Highest*2] (clamped ones included), plus the bounds.
func values(rng *rand.Rand, cfg Config, n int) []int64 {
	lo, hi := math.Log2(float64(max(cfg.Lowest/2, 1))), math.Log2(float64(cfg.Highest)*2)
	vs := []int64{cfg.Lowest, cfg.Highest, cfg.Lowest + 1, cfg.Highest - 1}
	for range n {
		f := math.Exp2(lo + rng.Float64()*(hi-lo))
		if f >= math.MaxInt64 {
			vs = append(vs, math.MaxInt64)
			continue
		}
		vs = append(vs, int64(f))
	}
	return vs
}

func clampTo(cfg Config, v int64) int64 { return min(max(v, cfg.Lowest), cfg.Highest) }

// The same values recorded here and into hdrhistogram-go give the same
// counts array, index for index, and the same answers, exactly.
func TestSameAsHdrHistogram(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, uint64(soak(1))))
	for _, cfg := range configs {
		w, region := newRecorder(t, cfg, "eq")
		rd := newReader(t, region)
		h := hdrhistogram.New(cfg.Lowest, cfg.Highest, cfg.SignificantFigures)
		var prev Snapshot
		require.NoError(t, rd.Snapshot(&prev))
		interval := hdrhistogram.New(cfg.Lowest, cfg.Highest, cfg.SignificantFigures)
		for round := range 3 {
			for i, v := range values(rng, cfg, soak(2000)) {
				n := int64(1 + i%3)
				w.RecordN(v, n)
				require.NoError(t, h.RecordValues(clampTo(cfg, v), n), "%+v: %d", cfg, v)
				require.NoError(t, interval.RecordValues(clampTo(cfg, v), n))
			}
			var s Snapshot
			require.NoError(t, rd.Snapshot(&s))
			require.Equal(t, h.Export().Counts, s.Counts, "%+v round %d", cfg, round)
			requireSameAnswers(t, h, &s)

			var cur Snapshot
			s.CopyTo(&cur)
			require.NoError(t, s.Sub(&prev))
			require.Equal(t, interval.Export().Counts, s.Counts)
			requireSameAnswers(t, interval, &s)
			require.Equal(t, interval.Min(), s.Min)
			require.Equal(t, interval.Max(), s.Max)
			interval.Reset()
			cur.CopyTo(&prev)

			// Import of the counts gives the same histogram.
			require.True(t, prev.Histogram().Equals(h), "%+v", cfg)
		}
	}
}

func requireSameAnswers(t *testing.T, h *hdrhistogram.Histogram, s *Snapshot) {
	t.Helper()
	require.Equal(t, h.TotalCount(), s.TotalCount)
	for _, q := range quantiles {
		require.Equal(t, h.ValueAtQuantile(q), s.ValueAtQuantile(q), "%+v q=%v", s.Config, q)
	}
	require.Equal(t, h.Mean(), s.Mean(), "%+v", s.Config)
}

// Every value of a small range lands at hdrhistogram-go's index.
func TestIndexOfEveryValue(t *testing.T) {
	for _, cfg := range []Config{
		{Lowest: 1, Highest: 100_000, SignificantFigures: 1},
		{Lowest: 3, Highest: 50_000, SignificantFigures: 2},
		{Lowest: 1, Highest: 70_000, SignificantFigures: 3},
	} {
		g, err := newGeometry(cfg)
		require.NoError(t, err)
		h := hdrhistogram.New(cfg.Lowest, cfg.Highest, cfg.SignificantFigures)
		for v := cfg.Lowest; v <= cfg.Highest; v++ {
			require.NoError(t, h.RecordValue(v))
			i := g.index(v)
			c := h.Export().Counts
			if c[i] != 1 {
				require.Failf(t, "wrong index", "%+v: value %d at %d, hdrhistogram counts it elsewhere", cfg, v, i)
			}
			h.Reset()
			if v > 2000 { // skip ahead: beyond the first buckets, sample
				v += v / 97
			}
		}
	}
}
