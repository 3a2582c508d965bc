package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/journal"
	"github.com/dutyrt/duty/ringbuf"
)

// WJ, WJK and WJL (docs/workloads.md): appends to a journal against bufio
// and memmove, and append-to-tailer latency. Every record is checked,
// after the timed span where the variant does not read it inside.

const (
	journalSegment  = 64 << 20 // journal.Options.SegmentSize's default
	wjPrefaultBytes = 16 << 20 // journal.Options.PrefaultBytes's default
	stampEvery      = 64       // records per clock reading where a variant stamps them
)

// The journal's record layout (docs/journal.md, "Record") that
// bufio-record writes by hand: a 40-byte header (length, magic and
// version, CRC32C, stream, type, flags, sequence, timestamp), records
// aligned to 8 bytes.
const (
	wjRecordHeaderLength = 40
	wjRecordAlignment    = 8
	wjRecordMagic        = 0x4A524401 // "\x01DRJ" little-endian: layout version 1
)

// tempDir makes a directory for one repetition's files.
func tempDir() (string, func(), error) {
	dir, err := os.MkdirTemp("", "dutybench-wj-")
	if err != nil {
		return "", nil, err
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// timed runs fn in slot 0 behind the barrier and returns its duration;
// with j, j's Flusher runs in slot 1 until fn has returned, as on a runner
// of its own with a backoff idle strategy.
func timed(cfg *runConfig, j *journal.Journal, fn func() error) (time.Duration, error) {
	t := newTeam(cfg.place)
	var stop atomic.Bool
	t.spawn(0, func() error {
		err := fn()
		t.finish()
		stop.Store(true)
		return err
	})
	if j != nil {
		t.spawn(1, func() error { return backgroundWork(t, &stop, j.Flusher().DoWork) })
	}
	return t.run(cfg.timeout)
}

// backgroundWork calls work, a duty cycle, with a backoff idle strategy
// until stop (or the team's abort) is set.
func backgroundWork(t *team, stop *atomic.Bool, work func() (int, error)) error {
	idler := idle.Backoff()
	for !stop.Load() && !t.abort.Load() {
		n, err := work()
		if err != nil {
			return err
		}
		idler.Idle(n)
	}
	return nil
}

// recordCastagnoli is the CRC32C table of bufio-record.
var recordCastagnoli = crc32.MakeTable(crc32.Castagnoli)

// recordCRC is the journal's checksum of a framed record of length bytes.
func recordCRC(rec []byte, length int) uint32 {
	return crc32.Update(crc32.Update(0, recordCastagnoli, rec[4:8]), recordCastagnoli, rec[12:length])
}

// bufioAppends is bufio and, framed, bufio-record: each record framed,
// checksummed and padded as the journal does it.
//
//go:noinline // a variant factory: see runFunc
func bufioAppends(size int, framed bool) runFunc {
	return func(cfg *runConfig) (time.Duration, error) {
		return using(tempDir, func(dir string) (time.Duration, error) {
			f, err := os.Create(filepath.Join(dir, "bufio"))
			if err != nil {
				return 0, err
			}
			defer f.Close()
			length, body := size, 0
			if framed {
				length, body = wjRecordHeaderLength+size, wjRecordHeaderLength
			}
			rec := make([]byte, (length+wjRecordAlignment-1)&^(wjRecordAlignment-1))
			if !framed {
				rec = rec[:length]
			}
			le := binary.LittleEndian
			var now int64
			d, err := timed(cfg, nil, func() error {
				w := bufio.NewWriterSize(f, 64<<10)
				for i := range cfg.n {
					putPayload(rec[body:], seqFor(i, cfg.corruptAt), 0)
					if framed {
						if i%stampEvery == 0 {
							now = time.Now().UnixNano()
						}
						le.PutUint32(rec[0:], uint32(length))
						le.PutUint32(rec[4:], wjRecordMagic)
						le.PutUint32(rec[12:], 1)
						le.PutUint32(rec[16:], uint32(msgTypeID))
						le.PutUint64(rec[24:], uint64(i))
						le.PutUint64(rec[32:], uint64(now))
						le.PutUint32(rec[8:], recordCRC(rec, length))
					}
					if _, err := w.Write(rec); err != nil {
						return err
					}
				}
				return w.Flush()
			})
			if err != nil {
				return 0, err
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return 0, err
			}
			r := bufio.NewReaderSize(f, 64<<10)
			c := newChecker(1)
			for range cfg.n {
				if _, err := io.ReadFull(r, rec); err != nil {
					return 0, err
				}
				if framed && le.Uint32(rec[8:]) != recordCRC(rec, length) {
					return 0, fmt.Errorf("%w: bufio-record: CRC mismatch", errPayload)
				}
				c.check(msgTypeID, rec[body:body+payloadLen])
			}
			return d, c.finish([]int{cfg.n})
		})
	}
}

// memmoveAppends is memmove: copies into a 64 MiB window touched
// beforehand.
//
//go:noinline // a variant factory: see runFunc
func memmoveAppends(size int) runFunc {
	return func(cfg *runConfig) (time.Duration, error) {
		const window = 64 << 20
		perWindow := window / size
		buf := make([]byte, window)
		for i := range buf {
			buf[i] = 0
		}
		rec := make([]byte, size)
		d, err := timed(cfg, nil, func() error {
			for i := range cfg.n {
				putPayload(rec, seqFor(i, cfg.corruptAt), 0)
				off := (i % perWindow) * size
				copy(buf[off:off+size], rec)
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
		// The window holds the last perWindow records.
		c := newChecker(1)
		first := max(0, cfg.n-perWindow)
		c.expected[0] = uint64(first)
		for i := first; i < cfg.n; i++ {
			off := (i % perWindow) * size
			c.check(msgTypeID, buf[off:off+payloadLen])
		}
		return d, c.finish([]int{cfg.n})
	}
}

// journalMode is how a journal variant appends.
type journalMode int

const (
	journalTuned      journalMode = iota // Stream.ClaimAt, a clock read per 64 records, a Flusher in slot 1
	journalNoPrefault                    // journalTuned without the Flusher's pre-faulting
	journalPlain                         // Journal.Claim, Options.Clock per record, no Flusher
	journalReplay                        // a Tailer reading records appended (journalPlain) before the span
)

//go:noinline // a variant factory: see runFunc
func journalAppends(size int, mode journalMode) runFunc {
	return func(cfg *runConfig) (time.Duration, error) {
		return using(tempDir, func(dir string) (time.Duration, error) {
			opts := journal.Options{SegmentSize: journalSegment}
			if mode == journalNoPrefault {
				opts.PrefaultBytes = -1
			}
			j, err := journal.Open(dir, opts)
			if err != nil {
				return 0, err
			}
			defer j.Close()
			stream, err := j.Stream(1)
			if err != nil {
				return 0, err
			}
			appendAll := func() error {
				var now int64
				for i := range cfg.n {
					var c journal.Claim
					if mode == journalPlain || mode == journalReplay {
						c, err = j.Claim(1, msgTypeID, size)
					} else {
						if i%stampEvery == 0 {
							now = time.Now().UnixNano()
						}
						c, err = stream.ClaimAt(msgTypeID, size, now)
					}
					if err != nil {
						return err
					}
					putPayload(c.Body(), seqFor(i, cfg.corruptAt), 0)
					clear(c.Body()[payloadLen:]) // the zeros stored, as the baselines write them
					if err := j.Commit(); err != nil {
						return err
					}
				}
				return nil
			}
			tl, err := j.NewTailer()
			if err != nil {
				return 0, err
			}
			defer tl.Close()
			c := newChecker(1)
			readAll := func() error {
				for range cfg.n {
					r, ok, err := tl.Next()
					if err != nil {
						return err
					}
					if !ok {
						return fmt.Errorf("%w: the journal ended after %d records", errPayload, c.received)
					}
					c.check(r.TypeID, r.Body[:payloadLen])
				}
				return nil
			}
			if mode == journalTuned {
				// The Flusher's first cycle before the span (its first
				// window pre-faulted), as WJL's: the span is a writer
				// whose Flusher is ahead of it, not the race at its start.
				if _, err := j.Flusher().DoWork(); err != nil {
					return 0, err
				}
			}
			var d time.Duration
			switch mode {
			case journalReplay:
				if err = appendAll(); err == nil {
					d, err = timed(cfg, nil, readAll)
				}
			case journalPlain:
				d, err = timed(cfg, nil, appendAll)
			default:
				d, err = timed(cfg, j, appendAll)
			}
			if err == nil && mode != journalReplay {
				err = readAll()
			}
			if err != nil {
				return 0, err
			}
			return d, c.finish([]int{cfg.n})
		})
	}
}

// latencyInterval is WJL's pace: at most one record per interval, so that
// each meets a reader spinning at the tail.
const latencyInterval = 4 * time.Microsecond

// pacedAppends runs a WJL repetition: write(i, now) appends record i
// stamped now (slot 0), once the reader has the one before (one record in
// flight: a descheduled reader delays one sample, not a queue); read(h)
// takes a record (a ring's padding at the wrap is one) and hands it to h,
// if a message (slot 1).
func pacedAppends(cfg *runConfig, write func(i int, now int64) error, read func(t *team, h ringbuf.Handler) error) (time.Duration, error) {
	t := newTeam(cfg.place)
	n, lat := cfg.n, cfg.lat[:cfg.n]
	clk := newClock()
	c := newChecker(1)
	var read_ atomic.Int64 // records the reader has read: its store, the writer's load
	t.spawn(0, func() error {
		last := clk.now()
		for i := range n {
			for read_.Load() < int64(i) || clk.now()-last < int64(latencyInterval) {
				if t.abort.Load() {
					return errAborted
				}
			}
			last = clk.now()
			if err := write(i, last); err != nil {
				return err
			}
		}
		return nil
	})
	t.spawn(1, func() error {
		h := func(typeID int32, b []byte) {
			now := clk.now()
			lat[c.received] = now - int64(binary.LittleEndian.Uint64(b[16:24]))
			c.check(typeID, b) // the stamp's bytes are not the checker's: it reads [0,16)
		}
		for i := range n {
			for c.received == i {
				if err := read(t, h); err != nil {
					return err
				}
			}
			read_.Store(int64(i + 1))
		}
		t.finish()
		return c.finish([]int{n})
	})
	return t.run(cfg.timeout)
}

// stamp writes record i's payload with the send time in [16,24).
func stamp(b []byte, i, corruptAt int, now int64) {
	putPayload(b, seqFor(i, corruptAt), 0)
	binary.LittleEndian.PutUint64(b[16:24], uint64(now))
}

// journalLatencyRing is WJL's ring and, with a 64-byte payload, ring-72
// (a record of the journal's size): the stamped bytes are the payload's
// last payloadLen, so the reader reads the record's first and last bytes,
// as the journal's body follows its header.
//
//go:noinline // a variant factory: see runFunc
func journalLatencyRing(payload int) runFunc {
	return func(cfg *runConfig) (time.Duration, error) {
		r, err := newOneToOne()
		if err != nil {
			return 0, err
		}
		p := make([]byte, payload)
		var tail ringbuf.Handler // h on those bytes, made once
		return pacedAppends(cfg, func(i int, now int64) error {
			stamp(p[payload-payloadLen:], i, cfg.corruptAt, now)
			return r.Write(msgTypeID, p) // never full: one record in flight
		}, func(t *team, h ringbuf.Handler) error {
			if !awaitReady(t, r) {
				return errAborted
			}
			if tail == nil {
				tail = func(typeID int32, b []byte) { h(typeID, b[max(0, len(b)-payloadLen):]) }
			}
			_, err := r.Read(tail, 1)
			return err
		})
	}
}

func journalLatency(cfg *runConfig) (time.Duration, error) {
	return using(tempDir, func(dir string) (time.Duration, error) {
		j, err := journal.Open(dir, journal.Options{SegmentSize: journalSegment})
		if err != nil {
			return 0, err
		}
		defer j.Close()
		// A Flusher cycle pre-faults the first PrefaultBytes, which the
		// records fit: an appender whose Flusher keeps ahead of it.
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
		return pacedAppends(cfg, func(i int, now int64) error {
			cl, err := stream.ClaimAt(msgTypeID, payloadLen, now)
			if err != nil {
				return err
			}
			stamp(cl.Body(), i, cfg.corruptAt, now)
			return j.Commit()
		}, func(t *team, h ringbuf.Handler) error {
			for {
				r, ok, err := tl.Next()
				if err != nil {
					return err
				}
				if ok && r.StreamID != 1 {
					return fmt.Errorf("%w: record of stream %d", errPayload, r.StreamID)
				}
				if ok {
					h(r.TypeID, r.Body)
					return nil
				}
				if t.abort.Load() {
					return errAborted
				}
			}
		})
	})
}
