//go:build unix && !linux

package journal

import "os"

// preallocate sizes f: a sparse file where fallocate is not available.
func preallocate(f *os.File, size int64) error { return f.Truncate(size) }
