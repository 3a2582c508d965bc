package journal

import (
	"fmt"
	"math"
	"os"
	"time"
)

// RetentionResult says what ApplyRetention deleted.
type RetentionResult struct {
	Deleted int // segments deleted
	Forced  int // of which under a registered Tailer, past HardLimitBytes
}

// ApplyRetention deletes whole segments from the oldest on, while one of
// the rules holds: the next segment was created more than
// Options.RetainAge ago (so every record of this one is older), or the
// journal's segments total more than Options.RetainBytes. It never deletes
// the segment being written, nor one a registered Tailer is in or has yet
// to read; past Options.HardLimitBytes it deletes those too, revoking the
// mapping under the Tailer (which then gets ErrBehindRetention), and counts
// them in Forced. Writer only. A Flusher calls it from its duty cycle.
//
// A reader in another process maps segments of its own: a deleted file
// stays readable through its mapping, but the reader cannot map it anew.
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
	oldestReader := int64(math.MaxInt64)
	for t := range j.tailers {
		oldestReader = min(oldestReader, t.pos.Load())
	}
	total := int64(len(j.segs)) * j.segSize
	var victims []*segment
	var forced []bool
	for len(j.segs) > 1 { // never the last: the writer's
		s, next := j.segs[0], j.segs[1]
		old := j.opts.RetainAge > 0 && time.Duration(now-next.created) > j.opts.RetainAge
		big := j.opts.RetainBytes > 0 && total > j.opts.RetainBytes
		hard := j.opts.HardLimitBytes > 0 && total > j.opts.HardLimitBytes
		if !old && !big && !hard {
			break
		}
		held := oldestReader < s.start+j.segSize
		if held && !hard {
			break
		}
		j.segs = j.segs[1:]
		victims = append(victims, s)
		forced = append(forced, held)
		total -= j.segSize
	}
	j.mu.Unlock()
	var err error
	for i, s := range victims {
		s.deleted.Store(true)
		if forced[i] {
			r.Forced++
			j.stats.forcedDeletions.Add(1)
			if ferr := s.forceRelease(); err == nil {
				err = ferr
			}
		}
		if rerr := s.release(); err == nil {
			err = rerr
		}
		if rerr := os.Remove(s.path); rerr != nil && err == nil {
			err = fmt.Errorf("journal: retention: %w", rerr)
		}
		r.Deleted++
		j.stats.deletedSegments.Add(1)
		j.opts.Logger.Info("journal: segment deleted by retention", "path", s.path, "forced", forced[i])
	}
	if len(victims) > 0 {
		if serr := syncDir(j.dir); err == nil && serr != nil {
			err = fmt.Errorf("journal: retention: %w", serr)
		}
		if terr := j.idx.trim(j.FirstPosition()); err == nil {
			err = terr
		}
	}
	return r, err
}
