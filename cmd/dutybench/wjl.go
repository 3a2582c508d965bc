package main

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/dutyrt/duty/journal"
	"github.com/dutyrt/duty/ringbuf"
)

// WJL: append-to-tailer latency (docs/workloads.md, "WJ, WJK and WJL:
// the journal"). A writer in slot 0 appends a 32-byte record wjlInterval after
// the previous one, once the reader has it (one record in flight, so that
// a reader descheduled by the host delays one sample, not a queue of
// them); a reader in slot 1 spins at the live tail and takes, per record,
// the time from just before the writer's claim (stamped in the payload's
// bytes [16,24)) to just after it has read the record. Variants:
// ring (the baseline: the same records through a one-to-one ring, the
// reader spinning on Ready) and journal (Stream.ClaimAt and Commit into a
// fresh journal, a Tailer's Next).
var wjl = &workload{
	name:        "wjl",
	kind:        kindLatency,
	defaultN:    200_000,
	defaultReps: 7,
	variants: []variant{
		{name: "ring", run: wjlRing},
		{name: "journal", run: wjlJournal},
	},
}

func init() { registry = append(registry, wjl) }

// wjlInterval is the writer's pace: at most one record per interval, so
// that each record meets a reader spinning at the tail.
const wjlInterval = 4 * time.Microsecond

// wjlPacer spaces the writer's records: record i goes wjlInterval after
// record i-1, and not before the reader has read record i-1.
type wjlPacer struct {
	clk  clock
	last int64
	read atomic.Int64 // records the reader has read: its store, the writer's load
}

// wait spins until record i may go and returns the time to stamp.
func (p *wjlPacer) wait(t *team, i int) (int64, bool) {
	for p.read.Load() < int64(i) {
		if t.abort.Load() {
			return 0, false
		}
	}
	for {
		now := p.clk.now()
		if now-p.last >= int64(wjlInterval) {
			p.last = now
			return now, true
		}
		if t.abort.Load() {
			return 0, false
		}
	}
}

// wjlStamp writes record i's payload with the send time in [16,24).
func wjlStamp(b []byte, i, corruptAt int, now int64) {
	putPayload(b, seqFor(i, corruptAt), 0)
	binary.LittleEndian.PutUint64(b[16:24], uint64(now))
}

// wjlLatency checks a record and returns its latency; the stamp's bytes are
// ignored by the checker, which reads [0,16).
func wjlLatency(clk clock, c *checker, typeID int32, b []byte) int64 {
	now := clk.now()
	stamp := int64(binary.LittleEndian.Uint64(b[16:24]))
	c.check(typeID, b)
	return now - stamp
}

func wjlRing(cfg *runConfig) (time.Duration, error) {
	r, _, err := newRings()
	if err != nil {
		return 0, err
	}
	t := newTeam(cfg.place)
	n, corruptAt, lat := cfg.n, cfg.corruptAt, cfg.lat[:cfg.n]
	clk := newClock()
	c := newChecker(1)
	pace := &wjlPacer{clk: clk}
	t.spawn(0, func() error {
		var p [payloadLen]byte
		for i := range n {
			now, ok := pace.wait(t, i)
			if !ok {
				return errAborted
			}
			wjlStamp(p[:], i, corruptAt, now)
			for {
				err := r.Write(msgTypeID, p[:])
				if err == nil {
					break
				}
				if err != ringbuf.ErrFull {
					return err
				}
				if t.abort.Load() {
					return errAborted
				}
			}
		}
		return nil
	})
	t.spawn(1, func() error {
		i := 0
		h := func(typeID int32, b []byte) {
			lat[i] = wjlLatency(clk, c, typeID, b)
			i++
			pace.read.Store(int64(i))
		}
		for i < n {
			if !awaitReady(t, r) {
				return errAborted
			}
			if _, err := r.Read(h, 1); err != nil {
				return err
			}
		}
		t.finish()
		return c.finish([]int{n})
	})
	return t.run(cfg.timeout)
}

func wjlJournal(cfg *runConfig) (time.Duration, error) {
	dir, done, err := wjDir()
	if err != nil {
		return 0, err
	}
	defer done()
	j, err := journal.Open(dir, journal.Options{SegmentSize: wjSegment})
	if err != nil {
		return 0, err
	}
	defer j.Close()
	// One Flusher cycle before the span pre-faults the first
	// Options.PrefaultBytes of the log (the standard run's records fit):
	// the latency of an appender whose Flusher keeps ahead of it.
	if _, err := j.Flusher().DoWork(); err != nil {
		return 0, err
	}
	stream, err := j.Stream(1)
	if err != nil {
		return 0, err
	}
	tl, err := j.NewTailer()
	if err != nil {
		return 0, err
	}
	defer tl.Close()
	t := newTeam(cfg.place)
	n, corruptAt, lat := cfg.n, cfg.corruptAt, cfg.lat[:cfg.n]
	clk := newClock()
	c := newChecker(1)
	pace := &wjlPacer{clk: clk}
	t.spawn(0, func() error {
		for i := range n {
			now, ok := pace.wait(t, i)
			if !ok {
				return errAborted
			}
			cl, err := stream.ClaimAt(msgTypeID, payloadLen, now)
			if err != nil {
				return err
			}
			wjlStamp(cl.Body, i, corruptAt, now)
			if err := j.Commit(); err != nil {
				return err
			}
		}
		return nil
	})
	t.spawn(1, func() error {
		for i := 0; i < n; {
			r, ok, err := tl.Next()
			if err != nil {
				return err
			}
			if !ok {
				if t.abort.Load() {
					return errAborted
				}
				continue
			}
			if r.StreamID != 1 {
				return fmt.Errorf("%w: record of stream %d", errPayload, r.StreamID)
			}
			lat[i] = wjlLatency(clk, c, r.TypeID, r.Body)
			i++
			pace.read.Store(int64(i))
		}
		t.finish()
		return c.finish([]int{n})
	})
	return t.run(cfg.timeout)
}
