package procs

import (
	"fmt"
	"log/slog"

	"go.uber.org/automaxprocs/maxprocs"
)

// Set adjusts GOMAXPROCS to the CPU quota, if any. Call it first in main.
func Set() {
	if _, err := maxprocs.Set(maxprocs.Logger(func(format string, args ...any) {
		slog.Debug(fmt.Sprintf(format, args...))
	})); err != nil {
		slog.Warn("GOMAXPROCS left unchanged", "err", err)
	}
}
