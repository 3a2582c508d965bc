package journal

import (
	"errors"
	"os"

	"github.com/dutyrt/duty/internal/journalfile"
	"github.com/dutyrt/duty/internal/mmapfile"
)

// defaultPrefaultBytes is how far ahead of the writer a Flusher faults the
// log's pages in when Options.PrefaultBytes is zero.
const defaultPrefaultBytes = 16 << 20

// prefault faults in the pages from the writer's position to
// PrefaultBytes ahead of it (into the prepared next segment where the
// window crosses the current one's end), so that the appender's first
// store to a page of a fresh segment does not take a page fault: the
// Flusher's thread takes them. It runs only once the writer has used a
// quarter of the window since the last time, and reports whether it
// faulted anything in. Flusher only (prefaulted is its own).
//
// The pages are faulted in writable, which marks them dirty: the kernel
// may write a page back (as zeros) before the writer fills it, and then
// again after; the window bounds those extra writes to the pages that sit
// in it longer than the kernel's dirty expiry.
//
// It never touches the bytes (populateWrite), so the writer storing to the
// same pages meanwhile is safe. Failures are not errors: a page left out
// is faulted in by the writer's store, as without a Flusher.
func (j *Journal) prefault() bool {
	window := j.opts.PrefaultBytes
	if window <= 0 || j.prefaultOff {
		return false
	}
	page := int64(os.Getpagesize())
	// From the committed position: an outstanding claim lies within the
	// window.
	w := j.committed.Load()
	to := (w + window + page - 1) &^ (page - 1) // madvise takes whole pages
	from := max(j.prefaulted, w&^(page-1))
	if to-from < window/4 {
		return false
	}
	did := false
	for from < to {
		start := j.segmentStart(from)
		end := min(to, start+j.segSize)
		s := j.prefaultTarget(start)
		if s == nil {
			break // the next segment is not made yet: the next cycle
		}
		err := mmapfile.PopulateWrite(s.Data[from-start : end-start])
		_ = s.Release()
		if errors.Is(err, mmapfile.ErrUnsupported) {
			j.prefaultOff = true
			return did
		}
		if err != nil {
			break
		}
		did = true
		from = end
	}
	j.prefaulted = max(j.prefaulted, from)
	return did
}

// prefaultTarget returns the segment starting at start, held: the table's
// or the prepared one; nil if neither.
func (j *Journal) prefaultTarget(start int64) *journalfile.Segment {
	s, err := j.acquire(start)
	if err == nil {
		return s
	}
	j.prepMu.Lock()
	defer j.prepMu.Unlock()
	if p := j.prepared; p != nil && p.Start == start && p.Hold() == nil {
		return p
	}
	return nil
}
