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
)

// WJ and WJK: appending records durably to a journal (package journal),
// one writer on one thread, with no flush, against the same bytes written
// through a bufio.Writer of 64 KiB over an os.File (the baseline) and
// copied with memmove into memory (the limit), in the same run
// (docs/workloads.md, "WJ, WJK and WJL: the journal"). WJ's records carry the
// standard 32-byte payload, WJK's 1 KiB (the payload, then zeros). The
// timed span is the appends (and bufio's final Flush); every record is
// then read back, untimed, and checked. journal-replay times a Tailer
// reading records appended before the span.
var (
	wj = &workload{
		name:        "wj",
		kind:        kindThroughput,
		defaultN:    2_000_000,
		defaultReps: 5,
		variants:    journalVariants(payloadLen),
	}
	wjk = &workload{
		name:        "wjk",
		kind:        kindThroughput,
		defaultN:    200_000,
		defaultReps: 5,
		variants:    journalVariants(1024),
	}
)

func init() { registry = append(registry, wj, wjk) }

func journalVariants(size int) []variant {
	return []variant{
		{name: "bufio", run: func(cfg *runConfig) (time.Duration, error) { return wjBufio(cfg, size) }},
		{name: "memmove", run: func(cfg *runConfig) (time.Duration, error) { return wjMemmove(cfg, size) }},
		{name: "journal", run: func(cfg *runConfig) (time.Duration, error) { return wjJournal(cfg, size, wjTuned) }},
		{name: "journal-replay", run: func(cfg *runConfig) (time.Duration, error) { return wjJournal(cfg, size, wjReplay) }},
		{name: "mmap-copy", extra: true, run: func(cfg *runConfig) (time.Duration, error) { return wjMmapCopy(cfg, size) }},
		{name: "bufio-record", extra: true, run: func(cfg *runConfig) (time.Duration, error) { return wjBufioRecord(cfg, size) }},
		{name: "journal-claim", extra: true, run: func(cfg *runConfig) (time.Duration, error) { return wjJournal(cfg, size, wjPlain) }},
		{name: "journal-noprefault", extra: true, run: func(cfg *runConfig) (time.Duration, error) { return wjJournal(cfg, size, wjNoPrefault) }},
	}
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

// wjDir makes a directory for one repetition's files, removed by the
// returned function.
func wjDir() (string, func(), error) {
	dir, err := os.MkdirTemp("", "dutybench-wj-")
	if err != nil {
		return "", nil, err
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// wjRecord fills rec (size bytes) with message i's payload, zeros after.
func wjRecord(rec []byte, i, corruptAt int) {
	putPayload(rec, seqFor(i, corruptAt), 0)
}

// wjFill fills a claimed body with message i's record, all of it: the
// payload, then zeros stored (the bytes the baselines write), not left to
// the fresh page's.
func wjFill(body []byte, i, corruptAt int) {
	wjRecord(body, i, corruptAt)
	clear(body[payloadLen:])
}

// wjFile creates a file for one repetition of a bufio variant; done
// closes and removes it.
func wjFile(name string) (*os.File, func(), error) {
	dir, rm, err := wjDir()
	if err != nil {
		return nil, nil, err
	}
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		rm()
		return nil, nil, err
	}
	return f, func() { f.Close(); rm() }, nil
}

// wjReadBack reads f from the start, n records of len(rec) bytes, and
// hands each to check (untimed).
func wjReadBack(f *os.File, rec []byte, n int, check func(rec []byte) error) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(f, 64<<10)
	for range n {
		if _, err := io.ReadFull(r, rec); err != nil {
			return err
		}
		if err := check(rec); err != nil {
			return err
		}
	}
	return nil
}

func wjBufio(cfg *runConfig, size int) (time.Duration, error) {
	f, done, err := wjFile("bufio")
	if err != nil {
		return 0, err
	}
	defer done()
	rec := make([]byte, size)
	var werr error
	d, err := timed(cfg, func() {
		w := bufio.NewWriterSize(f, 64<<10)
		for i := range cfg.n {
			wjRecord(rec, i, cfg.corruptAt)
			if _, werr = w.Write(rec); werr != nil {
				return
			}
		}
		werr = w.Flush()
	})
	if err != nil || werr != nil {
		return 0, firstErr(err, werr)
	}
	c := newChecker(1)
	if err := wjReadBack(f, rec, cfg.n, func(rec []byte) error {
		c.check(msgTypeID, rec[:payloadLen])
		return nil
	}); err != nil {
		return 0, err
	}
	return d, c.finish([]int{cfg.n})
}

// wjCastagnoli is the CRC32C table of bufio-record.
var wjCastagnoli = crc32.MakeTable(crc32.Castagnoli)

// wjBufioRecord is bufio with the journal's own record bytes: each record
// framed as journal frames it (docs/journal.md, "Record"), the CRC32C
// included, padded to the journal's alignment. It is what the journal's
// appends would cost written through a bufio.Writer instead of a mapping:
// the same bytes per record, where bufio writes the body alone.
func wjBufioRecord(cfg *runConfig, size int) (time.Duration, error) {
	f, done, err := wjFile("bufio-record")
	if err != nil {
		return 0, err
	}
	defer done()
	length := wjRecordHeaderLength + size
	rec := make([]byte, (length+wjRecordAlignment-1)&^(wjRecordAlignment-1))
	le := binary.LittleEndian
	var werr error
	var now int64
	d, err := timed(cfg, func() {
		w := bufio.NewWriterSize(f, 64<<10)
		for i := range cfg.n {
			if i%wjStampEvery == 0 {
				now = time.Now().UnixNano()
			}
			le.PutUint32(rec[0:], uint32(length))
			le.PutUint32(rec[4:], wjRecordMagic)
			le.PutUint32(rec[12:], 1)
			le.PutUint32(rec[16:], uint32(msgTypeID))
			le.PutUint64(rec[24:], uint64(i))
			le.PutUint64(rec[32:], uint64(now))
			wjRecord(rec[wjRecordHeaderLength:length], i, cfg.corruptAt)
			crc := crc32.Update(crc32.Update(0, wjCastagnoli, rec[4:8]), wjCastagnoli, rec[12:length])
			le.PutUint32(rec[8:], crc)
			if _, werr = w.Write(rec); werr != nil {
				return
			}
		}
		werr = w.Flush()
	})
	if err != nil || werr != nil {
		return 0, firstErr(err, werr)
	}
	c := newChecker(1)
	if err := wjReadBack(f, rec, cfg.n, func(rec []byte) error {
		crc := crc32.Update(crc32.Update(0, wjCastagnoli, rec[4:8]), wjCastagnoli, rec[12:length])
		if le.Uint32(rec[8:]) != crc {
			return fmt.Errorf("%w: bufio-record: CRC mismatch", errPayload)
		}
		c.check(msgTypeID, rec[wjRecordHeaderLength:wjRecordHeaderLength+payloadLen])
		return nil
	}); err != nil {
		return 0, err
	}
	return d, c.finish([]int{cfg.n})
}

func wjMemmove(cfg *runConfig, size int) (time.Duration, error) {
	const window = 64 << 20 // the bytes are copied into a window this large, as into a segment
	perWindow := window / size
	buf := make([]byte, window)
	for i := range buf { // touch it first: the limit, not the page faults
		buf[i] = 0
	}
	rec := make([]byte, size)
	d, err := timed(cfg, func() {
		for i := range cfg.n {
			wjRecord(rec, i, cfg.corruptAt)
			off := (i % perWindow) * size
			copy(buf[off:off+size], rec)
		}
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

// wjMode is how a journal variant appends.
type wjMode int

const (
	// wjTuned: as an appender on a duty cycle does it (docs/journal.md,
	// "Costs"): a Stream handle, the timestamp read once per 64 records
	// (Stream.ClaimAt), and a Flusher on the second CPU that prepares
	// segments and faults their pages in ahead of the writer.
	wjTuned wjMode = iota
	// wjNoPrefault: wjTuned with the Flusher's pre-faulting off.
	wjNoPrefault
	// wjPlain: Journal.Claim by stream id, Options.Clock read per record,
	// no Flusher: the writer creates segments and takes their page faults.
	wjPlain
	// wjReplay: a Tailer reading records appended (wjPlain) before the span.
	wjReplay
)

// wjStampEvery is how many records share one clock reading in wjTuned.
const wjStampEvery = 64

func wjJournal(cfg *runConfig, size int, mode wjMode) (time.Duration, error) {
	dir, done, err := wjDir()
	if err != nil {
		return 0, err
	}
	defer done()
	opts := journal.Options{SegmentSize: wjSegment}
	if mode == wjNoPrefault {
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
		if mode == wjPlain || mode == wjReplay {
			for i := range cfg.n {
				c, err := j.Claim(1, msgTypeID, size)
				if err != nil {
					return err
				}
				wjFill(c.Body, i, cfg.corruptAt)
				if err := j.Commit(); err != nil {
					return err
				}
			}
			return nil
		}
		var now int64
		for i := range cfg.n {
			if i%wjStampEvery == 0 {
				now = time.Now().UnixNano()
			}
			c, err := stream.ClaimAt(msgTypeID, size, now)
			if err != nil {
				return err
			}
			wjFill(c.Body, i, cfg.corruptAt)
			if err := j.Commit(); err != nil {
				return err
			}
		}
		return nil
	}
	t, err := j.NewTailer()
	if err != nil {
		return 0, err
	}
	defer t.Close()
	c := newChecker(1)
	readAll := func() error {
		for range cfg.n {
			r, ok, err := t.Next()
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
	var werr error
	switch mode {
	case wjReplay:
		if err := appendAll(); err != nil {
			return 0, err
		}
		d, err = timed(cfg, func() { werr = readAll() })
	case wjPlain:
		d, err = timed(cfg, func() { werr = appendAll() })
	default:
		d, err = timedWithFlusher(cfg, j, func() { werr = appendAll() })
	}
	if mode != wjReplay && err == nil && werr == nil {
		werr = readAll()
	}
	if err != nil || werr != nil {
		return 0, firstErr(err, werr)
	}
	return d, c.finish([]int{cfg.n})
}

// timed runs fn on the team's first slot (the producer's CPU) behind the
// barrier and returns its duration.
func timed(cfg *runConfig, fn func()) (time.Duration, error) {
	t := newTeam(cfg.place)
	t.spawn(0, func() error {
		fn()
		t.finish()
		return nil
	})
	return t.run(cfg.timeout)
}

// timedWithFlusher is timed with j's Flusher running on the team's second
// slot (the second CPU) from before the barrier until fn has returned, as
// on a runner of its own with a backoff idle strategy.
func timedWithFlusher(cfg *runConfig, j *journal.Journal, fn func()) (time.Duration, error) {
	t := newTeam(cfg.place)
	var stop atomic.Bool
	t.spawn(0, func() error {
		fn()
		t.finish()
		stop.Store(true)
		return nil
	})
	t.spawn(1, func() error {
		f := j.Flusher()
		idler := idle.Backoff()
		for !stop.Load() && !t.abort.Load() {
			n, err := f.DoWork()
			if err != nil {
				stop.Store(true)
				return err
			}
			idler.Idle(n)
		}
		return nil
	})
	return t.run(cfg.timeout)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
