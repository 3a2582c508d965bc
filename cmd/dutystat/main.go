// Command dutystat lists the duty files in a directory and prints the
// counters of every counters file, like Aeron's AeronStat: id, type, value,
// rate per second and label of each allocated counter, with each file's
// kind, size, owner pid and owner liveness. For every error log file it
// prints the distinct errors recorded (count, first and last time, the
// first line of each; -json carries the whole text), like Aeron's
// ErrorStat.
//
// Usage:
//
//	dutystat [-dir DIR] [-watch [-counters]] [-interval 1s] [-window 200ms] [-n N] [-json] [-since 10m] [-serve ADDR]
//
// By default it prints once and exits; the rates come from two samples
// -window apart (-window 0: one sample, no rates). With -watch it prints
// again every -interval (rates against the previous sample) until
// interrupted (SIGINT, SIGTERM) or, with -n, after N frames, one row per
// mailbox, runner, bridge and histogram (-counters: every counter). -json prints
// one JSON object per frame, one per line. -since D lists only the errors
// last observed within D before each sample. -serve ADDR serves the
// directory on http://ADDR/metrics to Prometheus instead (docs/operations.md
// lists the metrics), and a live page on http://ADDR/.
//
// dutystat maps every file read-only (ipc.OpenReadOnly: O_RDONLY and
// PROT_READ), so it cannot modify what it reads. A file that vanishes,
// cannot be opened, is not a duty file or is corrupt is reported in the
// output; the exit status is 0 unless the directory itself cannot be read
// (1) or the flags are wrong (2). docs/operations.md shows example output.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/dutyrt/duty/runner"
)

func main() {
	runner.SetMaxProcs()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Stdout, os.Stderr, os.Args[1:])
	stop()
	os.Exit(code)
}
