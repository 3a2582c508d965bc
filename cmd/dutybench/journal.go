package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/dutyrt/duty/journal"
)

// WJ and WJK: appending records durably to a journal (package journal),
// one writer on one thread, with no flush, against the same bytes written
// through a bufio.Writer of 64 KiB over an os.File (the baseline) and
// copied with memmove into memory (the limit), in the same run
// (docs/benchmarks.md, "WJ and WJK: the journal"). WJ's records carry the
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
		{name: "journal", run: func(cfg *runConfig) (time.Duration, error) { return wjJournal(cfg, size, false) }},
		{name: "journal-replay", run: func(cfg *runConfig) (time.Duration, error) { return wjJournal(cfg, size, true) }},
	}
}

// wjSegment is the journal's segment size in these workloads: the default.
const wjSegment = journal.DefaultSegmentSize

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

func wjBufio(cfg *runConfig, size int) (time.Duration, error) {
	dir, done, err := wjDir()
	if err != nil {
		return 0, err
	}
	defer done()
	f, err := os.Create(filepath.Join(dir, "bufio"))
	if err != nil {
		return 0, err
	}
	defer f.Close()
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
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	c := newChecker(1)
	r := bufio.NewReaderSize(f, 64<<10)
	for range cfg.n {
		if _, err := io.ReadFull(r, rec); err != nil {
			return 0, err
		}
		c.check(msgTypeID, rec[:payloadLen])
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

func wjJournal(cfg *runConfig, size int, replay bool) (time.Duration, error) {
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
	appendAll := func() error {
		for i := range cfg.n {
			c, err := j.Claim(1, msgTypeID, size)
			if err != nil {
				return err
			}
			wjRecord(c.Body, i, cfg.corruptAt)
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
	if replay {
		if err := appendAll(); err != nil {
			return 0, err
		}
		d, err = timed(cfg, func() { werr = readAll() })
	} else {
		d, err = timed(cfg, func() { werr = appendAll() })
		if err == nil && werr == nil {
			werr = readAll()
		}
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

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
