package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dutyrt/duty/internal/mmapfile"
)

// mmapCopyAppends is the extra mmap-copy: memmove's copies into fresh,
// preallocated, mapped segment files, pre-faulted ahead of the writer in
// slot 1 with the journal Flusher's call (mmapfile.PopulateWrite).
//
//go:noinline // a variant factory: see runFunc
func mmapCopyAppends(size int) runFunc {
	return func(cfg *runConfig) (time.Duration, error) {
		return using(tempDir, func(dir string) (time.Duration, error) {
			perSeg := journalSegment / size
			var err error
			maps := make([][]byte, (cfg.n+perSeg-1)/perSeg)
			defer func() {
				for _, m := range maps {
					if m != nil {
						_ = unix.Munmap(m)
					}
				}
			}()
			for s := range maps {
				if maps[s], err = mapSegment(filepath.Join(dir, fmt.Sprint(s))); err != nil {
					return 0, err
				}
			}
			record := func(i int) []byte { s, k := i/perSeg, i%perSeg; return maps[s][k*size : (k+1)*size] }
			var written atomic.Int64 // the writer's byte position over all segments
			var faulted int64        // the pre-faulter's
			// The pre-faulter: its first window before the span, as the
			// journal's first Flusher cycle (journalAppends).
			var stop atomic.Bool
			end := int64(len(maps)) * journalSegment
			prefault := func() (int, error) {
				to := min(end, written.Load()+wjPrefaultBytes)
				if to-faulted < wjPrefaultBytes/4 {
					return 0, nil
				}
				for faulted < to {
					at := faulted
					s, off := at/journalSegment, at%journalSegment
					n := min(to-at, journalSegment-off)
					if err := mmapfile.PopulateWrite(maps[s][off : off+n]); errors.Is(err, mmapfile.ErrUnsupported) {
						stop.Store(true) // the kernel cannot: the writer faults them
						return 0, nil
					} else if err != nil {
						return 0, fmt.Errorf("dutybench: pre-faulting: %w", err)
					}
					faulted = at + n
				}
				return 1, nil
			}
			if _, err := prefault(); err != nil {
				return 0, err
			}
			t := newTeam(cfg.place)
			t.spawn(0, func() error {
				rec := make([]byte, size)
				for i := range cfg.n {
					putPayload(rec, seqFor(i, cfg.corruptAt), 0)
					copy(record(i), rec)
					if i%perSeg%stampEvery == 0 {
						written.Store(int64(i/perSeg)*journalSegment + int64(i%perSeg*size))
					}
				}
				t.finish()
				stop.Store(true)
				return nil
			})
			t.spawn(1, func() error { return backgroundWork(t, &stop, prefault) })
			d, err := t.run(cfg.timeout)
			if err != nil {
				return 0, err
			}
			c := newChecker(1)
			for i := range cfg.n {
				c.check(msgTypeID, record(i)[:payloadLen])
			}
			return d, c.finish([]int{cfg.n})
		})
	}
}

// mapSegment creates a preallocated segment file and maps it shared.
func mapSegment(name string) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := unix.Fallocate(int(f.Fd()), 0, 0, journalSegment); err != nil {
		return nil, fmt.Errorf("dutybench: preallocating %s: %w", name, err)
	}
	return unix.Mmap(int(f.Fd()), 0, journalSegment, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
}
