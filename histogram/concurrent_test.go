package histogram

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// One writer records while several readers snapshot the same region: in
// every reader's sequence of snapshots the total and every count never
// decrease, each snapshot is consistent with itself (Min and Max bound the
// values counted, Clamped <= TotalCount), and once the writer has stopped
// the counts sum to exactly what it recorded.
func TestConcurrentReaders(t *testing.T) {
	cfg := Config{Lowest: 1, Highest: 1 << 20, SignificantFigures: 2}
	w, region := newRecorder(t, cfg, "stress")
	g, _ := newGeometry(cfg)
	const readers = 3
	records := soak(200_000)

	var done atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, readers)
	var snapshots atomic.Int64
	for range readers {
		rd := newReader(t, region)
		wg.Go(func() {
			var prev, cur Snapshot
			check := func() error {
				if err := rd.Snapshot(&cur); err != nil {
					return err
				}
				snapshots.Add(1)
				if cur.TotalCount < prev.TotalCount {
					return fmt.Errorf("total went from %d to %d", prev.TotalCount, cur.TotalCount)
				}
				for i := range prev.Counts {
					if cur.Counts[i] < prev.Counts[i] {
						return fmt.Errorf("count %d went from %d to %d", i, prev.Counts[i], cur.Counts[i])
					}
				}
				if cur.Clamped > cur.TotalCount || cur.Clamped < prev.Clamped {
					return fmt.Errorf("clamped %d (before %d) of %d", cur.Clamped, prev.Clamped, cur.TotalCount)
				}
				if first, last := nonEmpty(cur.Counts); first >= 0 {
					lo, hi := g.highestEquivalent(g.valueAt(first)), g.valueAt(last)
					if cur.Min > lo || cur.Max < hi {
						return fmt.Errorf("min %d max %d do not bound the counts (..%d, %d..)", cur.Min, cur.Max, lo, hi)
					}
				}
				cur.CopyTo(&prev)
				return nil
			}
			for !done.Load() {
				if err := check(); err != nil {
					errs <- err
					return
				}
			}
			errs <- check()
		})
	}
	var clamped int64
	v := int64(1)
	var recorded int64
	// Record at least records values, and on until every reader has taken
	// a few snapshots under way (or one has failed).
	for i := 0; i < records || (snapshots.Load() < 10*readers && len(errs) == 0); i++ {
		recorded++
		if i%1000 == 999 {
			w.Record(cfg.Highest + int64(i)) // clamped
			clamped++
			continue
		}
		w.Record(v)
		v = (v*31 + 7) % (cfg.Highest + 1)
	}
	done.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.GreaterOrEqual(t, snapshots.Load(), int64(10*readers), "the readers ran while the writer recorded")

	s := snapshot(t, newReader(t, region))
	require.Equal(t, recorded, s.TotalCount)
	require.Equal(t, clamped, s.Clamped)
	var sum int64
	for _, c := range s.Counts {
		sum += c
	}
	require.Equal(t, s.TotalCount, sum)
	require.Equal(t, recorded, le64(region, totalCountOffset))
}

// nonEmpty returns the first and last index of a non-zero count, or -1, -1.
func nonEmpty(counts []int64) (first, last int) {
	first, last = -1, -1
	for i, c := range counts {
		if c != 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	return first, last
}
