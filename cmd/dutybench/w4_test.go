package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// W4's variants also run in every registry-wide test (smoke_test.go:
// every placement, odd counts, a corrupt sequence that must fail the run,
// allocations independent of the message count, JSON). These tests cover
// what is particular to a second process.

func TestW4Registered(t *testing.T) {
	w4t, w4l := findWorkload("w4t"), findWorkload("w4l")
	names := func(w *workload) []string {
		var out []string
		for _, v := range selectVariants(w, nil, false) {
			out = append(out, v.name)
		}
		return out
	}
	require.Equal(t, []string{"unixsocket", "inprocess", "crossprocess", "publication-2sub"}, names(w4t), "the standard names, baseline first")
	require.Equal(t, []string{"unixsocket", "inprocess", "crossprocess"}, names(w4l))
	require.Equal(t, unitMmsgs, w4t.unit())
	require.Equal(t, unitNs, w4l.unit())
}

// A child in an unknown role fails at once, and the parent says why.
func TestW4ChildFailureReported(t *testing.T) {
	p, err := startChild(childSpec{role: "no-such-role"})
	require.NoError(t, err)
	defer p.stop()
	err = p.ready(time.Minute)
	require.ErrorContains(t, err, `unknown role "no-such-role"`)
	<-p.exited
	require.Error(t, p.err, "exit status 1")
}

// A consumer that dies in the middle of a repetition ends it with an
// error (the producer stops spinning on the full ring), never a hang.
func TestW4ChildDiesMidRun(t *testing.T) {
	w4t, w4l := findWorkload("w4t"), findWorkload("w4l")
	t.Setenv("DUTYBENCH_W4_EXIT_AFTER", "1000")
	for _, v := range []struct {
		w   *workload
		run func(*runConfig) (time.Duration, error)
	}{{w4t, crossProcessStream}, {w4t, socketStream}, {w4l, crossProcessPingPong}, {w4l, socketPingPong}} {
		cfg := smokeConfig(v.w, 200_000, placement{})
		cfg.timeout = 2 * time.Minute // hang guard only
		_, err := v.run(cfg)
		require.Error(t, err)
		require.NotErrorIs(t, err, errTimeout, "%v", err)
	}
}

func TestW4RunJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run([]string{"-w", "w4t,w4l", "-n", "3000", "-reps", "2", "-warmup", "0", "-json"}, &out, &errOut)
	require.NoError(t, err, errOut.String())
	var r Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &r))
	require.Len(t, r.Workloads, 2)
	for i, w := range []*workload{findWorkload("w4t"), findWorkload("w4l")} {
		wr := r.Workloads[i]
		require.Equal(t, w.name, wr.Name)
		require.Len(t, wr.Variants, len(w.variants))
		for _, ratio := range wr.Ratios {
			require.Equal(t, "unixsocket", ratio.Baseline)
			require.Greater(t, ratio.Ratio, 0.0)
		}
	}
}

// sweepW4Dirs removes the directories of dead runs only: not those of a
// live process, not this process's, not names it cannot parse.
func TestSweepW4DirsRemovesOnlyDeadRuns(t *testing.T) {
	base := t.TempDir()
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	live := exec.Command("sleep", "30")
	require.NoError(t, live.Start())
	t.Cleanup(func() { _ = live.Process.Kill(); _ = live.Wait() })

	mk := func(name string) string {
		p := filepath.Join(base, name)
		require.NoError(t, os.MkdirAll(filepath.Join(p, "sub"), 0o700))
		return p
	}
	deadDir := mk(fmt.Sprintf("%s%d-123", w4Prefix, dead.Process.Pid))
	keep := []string{
		mk(fmt.Sprintf("%s%d-456", w4Prefix, live.Process.Pid)),
		mk(fmt.Sprintf("%s%d-789", w4Prefix, os.Getpid())),
		mk(w4Prefix + "nopid-1"),
		mk("something-else"),
	}
	require.Equal(t, 1, sweepW4Dirs(base))
	require.NoDirExists(t, deadDir)
	for _, d := range keep {
		require.DirExists(t, d)
	}
}

// A repetition's directory carries the pid and is forgotten once removed.
func TestW4DirNamesThePid(t *testing.T) {
	dir, cleanup, err := w4Dir()
	require.NoError(t, err)
	require.Contains(t, filepath.Base(dir), fmt.Sprintf("%s%d-", w4Prefix, os.Getpid()))
	cleanup()
	require.NoDirExists(t, dir)
	_, live := liveDirs.Load(dir)
	require.False(t, live)
}
