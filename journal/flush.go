package journal

import (
	"errors"
	"time"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/internal/journalfile"
)

// Flush makes every committed record durable: it syncs the segments'
// pages from the flushed position to the committed one (msync MS_SYNC,
// oldest segment first), then advances the flushed position. It writes a
// checkpoint when the flushed position has moved a quarter of a segment
// since the last one. Safe to call from any goroutine (a Flusher does,
// concurrently with the writer); calls are serialised.
func (j *Journal) Flush() error {
	if j.readOnly {
		return ErrReadOnly
	}
	if j.closed.Load() {
		return ErrClosed
	}
	return j.flush(false, false)
}

// flush is Flush; with checkpoint set it always writes a checkpoint,
// marked clean if clean is set (Close, with no claim outstanding: nothing
// follows the committed position).
//
// Ordering: the records' bytes are stored into the mapping before the
// writer's release store of committed; the acquire load here makes them
// visible to this goroutine, and msync writes back the shared pages they
// live in. Only once msync returns is flushed advanced, and only a flushed
// position is ever written to the checkpoint, so the checkpoint never
// claims more than the disk holds.
func (j *Journal) flush(checkpoint, clean bool) error {
	j.flushMu.Lock()
	defer j.flushMu.Unlock()
	target := j.committed.Load()
	from := j.flushed.Load()
	for from < target {
		start := j.segmentStart(from)
		end := min(target, start+j.segSize)
		s, err := j.acquire(start)
		if errors.Is(err, ErrBehindRetention) {
			from = start + j.segSize // deleted by retention: nothing left to sync
			continue
		}
		if err != nil {
			return err
		}
		err = s.SyncName()
		if err == nil {
			err = journalfile.SyncData(s.Data, from-start, end-start)
		}
		if rerr := s.Release(); err == nil {
			err = rerr
		}
		if err != nil {
			return err
		}
		from = end
	}
	if target > j.flushed.Load() {
		j.flushed.Store(target)
		j.stats.flushes.Add(1)
	}
	j.lastFlush.Store(j.opts.Clock())
	if checkpoint || target-j.lastCkpt >= j.segSize/4 {
		var flags uint32
		if clean {
			flags = journalfile.CkptClean
		}
		if err := j.writeCheckpoint(target, flags); err != nil {
			return err
		}
		j.lastCkpt = target
	}
	return nil
}

// indexBatch bounds the records a Flusher indexes per duty cycle: a
// short cycle comes back to pre-faulting soon, which a fast writer needs
// more than an index close behind it.
const indexBatch = 512

// Flusher is the agent that applies FlushPeriodic and retention: run it on
// a runner (package runner) of its own, or call DoWork from a duty cycle
// that may block on disk. The appender never waits for it.
type Flusher struct {
	j *Journal
}

var _ agent.Agent = (*Flusher)(nil)

// Flusher returns the journal's flusher agent.
func (j *Journal) Flusher() *Flusher { return &Flusher{j: j} }

// OnStart implements agent.Agent.
func (f *Flusher) OnStart() error { return nil }

// OnClose implements agent.Agent; it flushes what is committed.
func (f *Flusher) OnClose() error {
	if f.j.closed.Load() {
		return nil
	}
	return f.j.Flush()
}

// RoleName implements agent.Agent.
func (f *Flusher) RoleName() string { return "journal-flusher" }

// DoWork flushes when the policy says so (under FlushPeriodic: FlushBytes
// committed since the last sync, or FlushInterval since it, with something
// to sync), prepares the next segment once the writer is past half of
// its own, faults in the pages ahead of the writer (Options.PrefaultBytes), indexes up to 512 records and applies retention; it returns 1
// when it did any of these.
func (f *Flusher) DoWork() (int, error) {
	j := f.j
	if j.closed.Load() {
		return 0, agent.ErrDone
	}
	work := 0
	if j.opts.Flush == FlushPeriodic {
		lag := j.committed.Load() - j.flushed.Load()
		if lag > 0 && (lag >= j.opts.FlushBytes || time.Duration(j.opts.Clock()-j.lastFlush.Load()) >= j.opts.FlushInterval) {
			if err := j.flush(false, false); err != nil {
				return 0, err
			}
			work = 1
		}
	}
	prepared, err := j.prepareNext()
	if err != nil {
		return work, err
	}
	if prepared {
		work = 1
	}
	if j.prefault() {
		work = 1
	}
	n, err := j.idx.follow(indexBatch)
	if err != nil {
		return work, err
	}
	if n > 0 {
		work = 1
	}
	if j.prefault() { // again: the writer moved on while the cycle indexed
		work = 1
	}
	if j.opts.RetainAge > 0 || j.opts.RetainBytes > 0 || j.opts.HardLimitBytes > 0 {
		r, err := j.ApplyRetention()
		if err != nil {
			return work, err
		}
		if r.Deleted > 0 {
			work = 1
		}
	}
	j.publishStatus()
	return work, nil
}

// WriteCheckpoint records flushed as durable, and the journal's oldest
// segment. Call it only once the log is durable up to flushed, with
// flushMu held or before any other goroutine runs (it takes j.mu).
func (j *Journal) writeCheckpoint(flushed int64, flags uint32) error {
	j.mu.Lock()
	first := j.first()
	j.mu.Unlock()
	return journalfile.WriteCheckpoint(j.dir, j.segSize, flushed, first, j.opts.Clock(), flags)
}
