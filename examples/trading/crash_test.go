//go:build linux

package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// childrenOf returns the pids of the processes whose parent is pid (from
// /proc/PID/task/*/children).
func childrenOf(t *testing.T, pid int) []int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "children"))
	require.NoError(t, err)
	var out []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread has gone
		}
		for _, s := range strings.Fields(string(b)) {
			n, err := strconv.Atoi(s)
			require.NoError(t, err)
			out = append(out, n)
		}
	}
	return out
}

// TestExchangeKilled: the exchange process the demo started is killed
// (SIGKILL) in the middle of a run, with -ipc (shared-memory mailboxes)
// and with -nats (the mailboxes bridged through the embedded server). The
// demo must not hang on mailboxes nobody serves: it ends the run, prints
// the final table, reports the failure on the reconciliation line and
// exits with status 1. The test's context is only a hang guard.
func TestExchangeKilled(t *testing.T) {
	for _, mode := range []string{"-ipc", "-nats"} {
		t.Run(mode, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			dir := t.TempDir()
			cmd, sc, stderr := demo(t, ctx, mode, "-dir", dir, "-duration", "1m", "-instruments", "2", "-rate", "20000", "-drain", "2s")
			head := untilFirstTick(t, sc, stderr)
			kids := childrenOf(t, cmd.Process.Pid)
			require.Len(t, kids, 1, "the demo's exchange process")
			require.NoError(t, syscall.Kill(kids[0], syscall.SIGKILL))
			out, code := finish(t, cmd, sc, head)
			t.Logf("%s%s", out, stderr)
			require.Equal(t, 1, code)
			require.Contains(t, out, "final: exchange process ended")
			// The seconds after the kill have no fills: the live line shows
			// no latency for them rather than a zero latency.
			require.NotContains(t, out, " 0ns")
			last := lastLine(out)
			require.True(t, strings.HasPrefix(last, "reconciliation: "), last)
			require.Contains(t, last, "the exchange process failed: signal: killed")
			if mode == "-ipc" {
				// The demo's own files are gone (the dead exchange's stay, as
				// a crashed owner's files do; the next run replaces them).
				for _, name := range []string{fileStrategyResp, fileRiskResp, "demo.counters", "demo.errors"} {
					require.NoFileExists(t, filepath.Join(dir, name))
				}
			}
		})
	}
}
