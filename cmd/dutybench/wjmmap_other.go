//go:build !linux

package main

import (
	"errors"
	"fmt"
	"time"
)

// wjMmapCopy fails: pre-faulting a mapping without touching it is Linux's
// (MADV_POPULATE_WRITE).
func wjMmapCopy(*runConfig, int) (time.Duration, error) {
	return 0, fmt.Errorf("dutybench: mmap-copy: %w", errors.ErrUnsupported)
}
