//go:build !linux

package main

import (
	"errors"
	"fmt"
	"time"
)

// mmapCopyAppends fails: MADV_POPULATE_WRITE is Linux's.
func mmapCopyAppends(int) runFunc {
	return func(*runConfig) (time.Duration, error) {
		return 0, fmt.Errorf("dutybench: mmap-copy: %w", errors.ErrUnsupported)
	}
}
