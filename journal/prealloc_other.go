//go:build unix && !linux

package journal

import "os"

// preallocate writes size zero bytes to f: no fallocate here, and a
// sparse file could fault (SIGBUS) on a full disk when a page is stored.
func preallocate(f *os.File, size int64) error { return writeZeros(f, size) }

// populateWrite is not available here: segments are not pre-faulted.
func populateWrite([]byte) error { return errPrefaultUnsupported }

// punchHole is not available here: index entries are not trimmed.
func punchHole(*os.File, int64, int64) error { return errPunchUnsupported }
