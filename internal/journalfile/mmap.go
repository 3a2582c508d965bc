//go:build unix

package journalfile

import (
	"fmt"
	"os"

	"github.com/dutyrt/duty/internal/mmapfile"
)

// mapFile maps the first size bytes of f, shared, read-write or read-only
// (mmapfile.Map), naming the file in its error.
func mapFile(f *os.File, size int64, writable bool) ([]byte, error) {
	b, err := mmapfile.Map(int(f.Fd()), size, writable, false)
	if err != nil {
		return nil, fmt.Errorf("journal: mmap %s: %w", f.Name(), err)
	}
	return b, nil
}

// SyncData makes b[from:to] of a segment's mapping durable (mmapfile.Sync);
// a variable, so that a test can make it fail.
var SyncData = func(b []byte, from, to int64) error {
	if err := mmapfile.Sync(b, from, to); err != nil {
		return fmt.Errorf("journal: msync: %w", err)
	}
	return nil
}

// SyncFile makes a file's bytes and metadata durable (fsync); a
// variable, so that a test can make it fail.
var SyncFile = func(f *os.File) error { return f.Sync() }

// FailSyncs makes the next n calls of SyncData and SyncFile fail with
// err, for tests of what a failed sync gives, and returns the function
// that puts them back (for t.Cleanup). Not safe while a journal syncs
// concurrently.
func FailSyncs(n int, err error) (restore func()) {
	origData, origFile := SyncData, SyncFile
	fail := func() bool {
		if n > 0 {
			n--
			return true
		}
		return false
	}
	SyncData = func(b []byte, from, to int64) error {
		if fail() {
			return err
		}
		return origData(b, from, to)
	}
	SyncFile = func(f *os.File) error {
		if fail() {
			return err
		}
		return origFile(f)
	}
	return func() { SyncData, SyncFile = origData, origFile }
}
