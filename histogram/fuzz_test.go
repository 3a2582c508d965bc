package histogram

import (
	"errors"
	"testing"

	"github.com/dutyrt/duty"
	"github.com/dutyrt/duty/internal/atomicbuf"
)

// FuzzReader: NewReader and Snapshot over arbitrary bytes never panic, and
// every error but ErrNotReady is corruption; a snapshot they accept is
// consistent (counts sum to TotalCount, Clamped <= TotalCount, Min <= Max)
// and its queries do not panic.
func FuzzReader(f *testing.F) {
	small := Config{Lowest: 1, Highest: 2, SignificantFigures: 1}
	region, _ := NewRegion(small)
	w, _ := NewRecorder(region, small, "seed")
	f.Add(append([]byte(nil), region...)) // empty, published
	w.RecordN(1, 3)
	w.Record(5)
	f.Add(append([]byte(nil), region...)) // with counts and a clamp
	f.Add(region[:headerLength])          // no room for the counts
	f.Add(make([]byte, 300))              // not published
	bad := append([]byte(nil), region...)
	put64(bad, countsOffset, -1)
	f.Add(bad)
	bad = append([]byte(nil), region...)
	put32(bad, significantFiguresOffset, 0)
	f.Add(bad)
	bad = append([]byte(nil), region...)
	put64(bad, highestOffset, 1<<62)
	put64(bad, countsLengthOffset, 1<<40)
	f.Add(bad)
	f.Add([]byte{})

	f.Fuzz(func(t *testing.T, data []byte) {
		b := atomicbuf.Make(len(data)).Bytes() // aligned, as a mapping is
		copy(b, data)
		r, err := NewReader(b)
		if err != nil {
			if !errors.Is(err, ErrNotReady) && !errors.Is(err, duty.ErrCorrupt) {
				t.Fatalf("NewReader: %v is neither ErrNotReady nor corruption", err)
			}
			return
		}
		if r.Size() > len(b) {
			t.Fatalf("reader of %d bytes over a region of %d", r.Size(), len(b))
		}
		var s Snapshot
		if err := r.Snapshot(&s); err != nil {
			if !errors.Is(err, duty.ErrCorrupt) {
				t.Fatalf("Snapshot: %v is not corruption", err)
			}
			return
		}
		var sum int64
		for _, c := range s.Counts {
			sum += c
		}
		if sum != s.TotalCount || s.Clamped > s.TotalCount || s.Min > s.Max {
			t.Fatalf("inconsistent snapshot: sum %d total %d clamped %d min %d max %d", sum, s.TotalCount, s.Clamped, s.Min, s.Max)
		}
		_ = s.ValueAtQuantile(99)
		_ = s.Mean()
		var prev Snapshot
		s.CopyTo(&prev)
		if err := s.Sub(&prev); err != nil || s.TotalCount != 0 {
			t.Fatalf("a snapshot minus itself: %v, total %d", err, s.TotalCount)
		}
	})
}
