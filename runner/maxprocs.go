package runner

import (
	"fmt"
	"log/slog"

	"go.uber.org/automaxprocs/maxprocs"
)

// SetMaxProcs sets GOMAXPROCS to the container's CPU quota, if it has one
// (go.uber.org/automaxprocs), and logs the decision through log/slog at
// debug level rather than on stderr. Call it first in main: a runner's
// locked thread counts against GOMAXPROCS while it runs Go code, so a
// quota below the number of runners plus one starves the rest of the
// program.
func SetMaxProcs() {
	if _, err := maxprocs.Set(maxprocs.Logger(func(format string, args ...any) {
		slog.Debug(fmt.Sprintf(format, args...))
	})); err != nil {
		slog.Warn("GOMAXPROCS left unchanged", "err", err)
	}
}
