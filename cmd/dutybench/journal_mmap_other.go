//go:build !linux

package main

import (
	"errors"
	"fmt"
	"time"
)

// mmapCopyAppends fails: pre-faulting a mapping without touching it is
// Linux's (MADV_POPULATE_WRITE).
func mmapCopyAppends(int) runFunc {
	return func(*runConfig) (time.Duration, error) {
		return 0, fmt.Errorf("dutybench: mmap-copy: %w", errors.ErrUnsupported)
	}
}
