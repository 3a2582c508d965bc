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

// WJ and WJK: appending records durably to a journal (package journal),
// one writer on one thread, with no flush, against the same bytes written
// through a bufio.Writer of 64 KiB over an os.File (the baseline) and
// copied with memmove into memory (the limit), in the same run
// (docs/workloads.md, "WJ, WJK and WJL: the journal"). WJ's records carry
// the standard 32-byte payload, WJK's 1 KiB (the payload, then zeros). The
// timed span is the appends (and bufio's final Flush); every record is
// then read back, untimed, and checked. journal-replay times a Tailer
// reading records appended before the span. WJL: append-to-tailer latency.

// journalSegment is the journal's segment size in these workloads.
const journalSegment = wjSegment

// stampEvery is how many records share one clock reading where a variant
// stamps its records.
const stampEvery = 64

// tempDir makes a directory for one repetition's files, removed by the
// returned function.
func tempDir() (string, func(), error) {
	dir, err := os.MkdirTemp("", "dutybench-wj-")
	if err != nil {
		return "", nil, err
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// timed runs fn on the team's first slot (the producer's CPU) behind the
// barrier and returns its duration; with j, j's Flusher runs on the second
// slot from before the barrier until fn has returned, as on a runner of
// its own with a backoff idle strategy.
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

// bufioAppends is bufio: the records' bytes through a 64 KiB bufio.Writer
// over a file; with framed, the extra bufio-record, each record framed as
// the journal frames it (docs/journal.md, "Record"), its CRC32C included,
// padded to the journal's alignment: the record format's cost apart from
// the mapping's.
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
			rec := make([]byte, length)
			if framed { // padded to the journal's alignment, as the journal pads
				rec = make([]byte, (length+wjRecordAlignment-1)&^(wjRecordAlignment-1))
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
			// Read back, untimed, and check.
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

// memmoveAppends is memmove: the records copied into a 64 MiB window of
// memory touched beforehand, as into a segment: the limit, not the page
// faults.
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
		// Check the records the window still holds: the last perWindow.
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
	// journalTuned: as an appender on a duty cycle does it (docs/journal.md,
	// "Costs"): a Stream handle, the timestamp read once per 64 records
	// (Stream.ClaimAt), and a Flusher on the second CPU that prepares
	// segments and faults their pages in ahead of the writer.
	journalTuned journalMode = iota
	// journalNoPrefault: journalTuned with the Flusher's pre-faulting off.
	journalNoPrefault
	// journalPlain: Journal.Claim by stream id, Options.Clock read per
	// record, no Flusher: the writer creates segments and takes their page
	// faults.
	journalPlain
	// journalReplay: a Tailer reading records appended (journalPlain)
	// before the span.
	journalReplay
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
					putPayload(c.Body, seqFor(i, cfg.corruptAt), 0)
					clear(c.Body[payloadLen:]) // the zeros stored, as the baselines write them
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

// WJL (docs/workloads.md, "WJ, WJK and WJL: the journal"): a writer in
// slot 0 appends a 32-byte record latencyInterval after the previous one,
// once the reader has it (one record in flight, so that a reader
// descheduled by the host delays one sample, not a queue of them); a
// reader in slot 1 spins at the live tail and takes, per record, the time
// from just before the writer's claim (stamped in the payload's bytes
// [16,24)) to just after it has read the record. Variants: ring (the
// baseline: the same records through a one-to-one ring, the reader
// spinning on Ready) and journal (Stream.ClaimAt and Commit into a fresh
// journal, a Tailer's Next).

// latencyInterval is the writer's pace: at most one record per interval,
// so that each record meets a reader spinning at the tail.
const latencyInterval = 4 * time.Microsecond

// pacedAppends runs a WJL repetition: write(i, now) appends record i
// stamped now, paced as above; read(h) spins until it has taken a record
// (a ring's padding at the wrap is one) and handed it to h, if a message.
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

// journalLatencyRing is WJL's ring (the 32-byte payload of the other
// workloads: a 40-byte record) and ring-72 (a 64-byte payload: a 72-byte
// record, the journal's size for WJL's records, whose 40-byte header and
// 32-byte body span two cache lines where the ring's 40 bytes mostly sit
// in one, its stamp in the last bytes as the journal's body is): what
// the record's size alone costs the one-way.
//
//go:noinline // a variant factory: see runFunc
func journalLatencyRing(payload int) runFunc {
	return func(cfg *runConfig) (time.Duration, error) {
		r, err := newOneToOne()
		if err != nil {
			return 0, err
		}
		// The stamped bytes are the payload's last payloadLen, as the
		// journal's body follows its 40-byte header: the reader reads the
		// record's first and last bytes.
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
		return pacedAppends(cfg, func(i int, now int64) error {
			cl, err := stream.ClaimAt(msgTypeID, payloadLen, now)
			if err != nil {
				return err
			}
			stamp(cl.Body, i, cfg.corruptAt, now)
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

// wjSegment is the journal's segment size in these workloads: its default
// (journal.Options.SegmentSize).
const wjSegment = 64 << 20

// The journal's record layout (docs/journal.md, "Record"), which
// wjBufioRecord writes by hand: a 40-byte header (length, magic and
// version, CRC32C, stream, type, flags, sequence, timestamp), records
// aligned to 8 bytes.
const (
	wjRecordHeaderLength = 40
	wjRecordAlignment    = 8
	wjRecordMagic        = 0x4A524401 // "\x01DRJ" little-endian: layout version 1
)
