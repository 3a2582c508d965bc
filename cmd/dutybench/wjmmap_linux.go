package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dutyrt/duty/idle"
)

// wjMmapCopy is the extra variant mmap-copy: the limit of any journal that
// appends into mapped files here. It copies the records' bytes (as memmove
// does) into fresh segment files of the journal's size, preallocated and
// mapped as the journal maps them, in the same directory, with the pages
// faulted in ahead of the writer on the second CPU as the journal's
// Flusher does it (madvise MADV_POPULATE_WRITE, wjPrefaultBytes
// ahead): no header, checksum, index or commit. The gap between memmove
// and it is the fresh file pages' cost, which every mapped journal pays.
func wjMmapCopy(cfg *runConfig, size int) (time.Duration, error) {
	dir, done, err := wjDir()
	if err != nil {
		return 0, err
	}
	defer done()
	perSeg := wjSegment / size
	segs := (cfg.n + perSeg - 1) / perSeg
	maps := make([][]byte, segs)
	defer func() {
		for _, m := range maps {
			if m != nil {
				_ = unix.Munmap(m)
			}
		}
	}()
	for s := range maps {
		if maps[s], err = wjMapSegment(filepath.Join(dir, fmt.Sprint(s))); err != nil {
			return 0, err
		}
	}
	var written atomic.Int64 // the writer's byte position over all segments
	t := newTeam(cfg.place)
	var stop atomic.Bool
	t.spawn(0, func() error {
		rec := make([]byte, size)
		for i := range cfg.n {
			wjRecord(rec, i, cfg.corruptAt)
			s, k := i/perSeg, i%perSeg
			copy(maps[s][k*size:(k+1)*size], rec)
			if k%wjStampEvery == 0 {
				written.Store(int64(s)*wjSegment + int64(k*size))
			}
		}
		t.finish()
		stop.Store(true)
		return nil
	})
	t.spawn(1, func() error {
		idler := idle.Backoff()
		var faulted int64
		end := int64(segs) * wjSegment
		for !stop.Load() && !t.abort.Load() {
			to := min(end, written.Load()+wjPrefaultBytes)
			if to-faulted < wjPrefaultBytes/4 {
				idler.Idle(0)
				continue
			}
			for faulted < to {
				s, off := faulted/wjSegment, faulted%wjSegment
				n := min(to-faulted, wjSegment-off)
				if err := unix.Madvise(maps[s][off:off+n], unix.MADV_POPULATE_WRITE); err != nil {
					if errors.Is(err, unix.EINVAL) {
						return nil // the kernel cannot: the writer faults them
					}
					return fmt.Errorf("dutybench: pre-faulting: %w", err)
				}
				faulted += n
			}
			idler.Idle(1)
		}
		return nil
	})
	d, err := t.run(cfg.timeout)
	if err != nil {
		return 0, err
	}
	c := newChecker(1)
	for i := range cfg.n {
		s, k := i/perSeg, i%perSeg
		c.check(msgTypeID, maps[s][k*size:k*size+payloadLen])
	}
	return d, c.finish([]int{cfg.n})
}

// wjPrefaultBytes is how far ahead of the writer the journal's Flusher
// faults pages in by default (journal.Options.PrefaultBytes).
const wjPrefaultBytes = 16 << 20

// wjMapSegment creates a segment file of wjSegment bytes, preallocated,
// and maps it shared, read and write.
func wjMapSegment(name string) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := unix.Fallocate(int(f.Fd()), 0, 0, wjSegment); err != nil {
		return nil, fmt.Errorf("dutybench: preallocating %s: %w", name, err)
	}
	return unix.Mmap(int(f.Fd()), 0, wjSegment, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
}
