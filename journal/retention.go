package journal

import (
	"fmt"
	"math"
	"os"
	"time"

	"github.com/dutyrt/duty/internal/journalfile"
	"github.com/dutyrt/duty/internal/mmapfile"
)

// RetentionResult says what ApplyRetention deleted.
type RetentionResult struct {
	Deleted int // segments deleted
	Forced  int // of which under a registered reader, past HardLimitBytes
}

// ApplyRetention deletes whole segments from the oldest on, while one of
// the rules holds: the next segment was created more than
// Options.RetainAge ago (so every record of this one is older), or the
// journal's segments total more than Options.RetainBytes. It never deletes
// the segment being written, nor one a registered reader, in any process,
// is in or has yet to read; past Options.HardLimitBytes it deletes those
// too (down to the limit), counts them in Forced, revokes the mapping
// under a Tailer of this process, and every such reader gets
// ErrBehindRetention from its next Next. Writer only. A Flusher calls it
// from its duty cycle.
//
// Readers are the Tailers of this Journal and the live slots of the
// reader registry (internal/journalfile); a slot whose owner process is dead is
// reclaimed here when it is the one holding a segment back. The cut is
// published in the registry before any file is removed: the proposed
// floor, a second scan of the registry (for a reader that registered
// meanwhile), then the floor itself (docs/journal.md, "Reader
// registry").
func (j *Journal) ApplyRetention() (RetentionResult, error) {
	var r RetentionResult
	if j.readOnly {
		return r, ErrReadOnly
	}
	now := j.opts.Clock()
	j.mu.Lock()
	if j.closed.Load() {
		j.mu.Unlock()
		return r, ErrClosed
	}
	// What the rules ask for, readers aside: soft (age, size) deletes
	// down to segs[soft], the hard limit down to segs[hard].
	total := int64(len(j.segs)) * j.segSize
	soft, hard := 0, 0
	for k := 0; k < len(j.segs)-1; k++ { // never the last: the writer's
		old := j.opts.RetainAge > 0 && time.Duration(now-j.segs[k+1].Created) > j.opts.RetainAge
		big := j.opts.RetainBytes > 0 && total > j.opts.RetainBytes
		over := j.opts.HardLimitBytes > 0 && total > j.opts.HardLimitBytes
		if !old && !big && !over {
			break
		}
		if old || big {
			soft = k + 1
		}
		if over {
			hard = k + 1
		}
		total -= j.segSize
	}
	if soft == 0 && hard == 0 {
		j.mu.Unlock()
		return r, nil
	}
	first := j.segs[0].Start
	target, hardFloor := j.segs[max(soft, hard)].Start, j.segs[hard].Start
	lowest := j.lowestReader(first, target, true)
	floor := max(min(target, j.heldFrom(lowest)), hardFloor)
	if reg := j.reg; reg != nil && floor > first {
		// The proposal, then a second scan: a reader that registered (or
		// sought back) since the first either shows in it or sees the
		// proposal and moves on (Tailer.seekTo). Sequentially consistent
		// stores and loads, in the shared mapping.
		reg.Proposed().Store(floor)
		if testHookBetweenScans != nil {
			testHookBetweenScans()
		}
		lowest = min(lowest, j.lowestReader(first, floor, false))
		floor = max(min(floor, j.heldFrom(lowest)), hardFloor)
		reg.Floor().Store(floor)
		reg.Proposed().Store(floor)
	}
	var victims []*journalfile.Segment
	var forced []bool
	for len(j.segs) > 1 && j.segs[0].Start < floor {
		s := j.segs[0]
		j.segs = j.segs[1:]
		victims = append(victims, s)
		forced = append(forced, j.heldFrom(lowest) <= s.Start)
	}
	j.mu.Unlock()
	var err, ckErr error
	if len(victims) > 0 {
		// The checkpoint records the oldest segment kept before any file
		// goes: recovery tells segments retention deleted from segments
		// lost some other way. If it cannot be written, nothing is
		// deleted (the files stay, out of the table; the next Open maps
		// them again).
		j.flushMu.Lock()
		ckErr = j.writeCheckpoint(j.lastCkpt, 0)
		j.flushMu.Unlock()
		err = ckErr
	}
	for i, s := range victims {
		if ckErr != nil {
			_ = s.Release()
			continue
		}
		s.Deleted.Store(true)
		if forced[i] {
			r.Forced++
			j.stats.forcedDeletions.Add(1)
			if ferr := s.ForceRelease(); err == nil {
				err = ferr
			}
		}
		if rerr := s.Release(); err == nil {
			err = rerr
		}
		if rerr := os.Remove(s.Path); rerr != nil && err == nil {
			err = fmt.Errorf("journal: retention: %w", rerr)
		}
		r.Deleted++
		j.stats.deletedSegments.Add(1)
		j.opts.Logger.Info("journal: segment deleted by retention", "path", s.Path, "forced", forced[i])
	}
	if len(victims) > 0 && ckErr == nil {
		if serr := mmapfile.SyncDir(j.dir); err == nil && serr != nil {
			err = fmt.Errorf("journal: retention: %w", serr)
		}
		if terr := j.idx.trim(j.firstPosition()); err == nil {
			err = terr
		}
	}
	return r, err
}

// testHookBetweenScans, set by tests, runs between the proposal and the
// second scan: where a reader racing retention registers.
var testHookBetweenScans func()

// lowestReader returns the lowest position, from first to the committed
// position, of this Journal's Tailers and of the registry's live readers
// below limit (math.MaxInt64 if none). A position outside that range
// holds nothing back: before it, the reader is behind retention already;
// after it, it is in the writer's segment. verify checks the liveness of
// registry slots (reclaiming dead owners'). j.mu held.
func (j *Journal) lowestReader(first, limit int64, verify bool) int64 {
	hi := j.committed.Load()
	m := int64(math.MaxInt64)
	for t := range j.tailers {
		if p := t.pos.Load(); p >= first && p <= hi {
			m = min(m, p)
		}
	}
	if j.reg != nil {
		// A reader at p may step back to the start of the record that
		// ended at p (a Replayer that could not send it), which is in the
		// segment of p-1: limit+1 keeps such a reader in view.
		m = min(m, j.reg.Lowest(first, hi, limit+1, verify))
	}
	return m
}

// heldFrom is the start of the oldest segment a reader at p holds: the
// one with p-1 in it, so that a reader exactly at a segment's end (or
// just past its end marker's slot) can still step back into it.
func (j *Journal) heldFrom(p int64) int64 {
	if p == math.MaxInt64 {
		return p
	}
	return j.segmentStart(p - 1)
}
