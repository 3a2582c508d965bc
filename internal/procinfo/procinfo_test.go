package procinfo

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// knows reports whether this platform's process table answers Info.
func knows() bool { return runtime.GOOS == "linux" || runtime.GOOS == "darwin" }

// The process table knows this process, with a start time that is its
// identity: Running tells it from a pid reused by another process.
func TestRunningTellsAReusedPid(t *testing.T) {
	if !knows() {
		t.Skip("no process table here")
	}
	start, gone, known := Info(os.Getpid())
	require.True(t, known)
	require.False(t, gone)
	require.NotZero(t, start)
	again, _, _ := Info(os.Getpid())
	require.Equal(t, start, again, "the start time is the process's identity")
	require.True(t, Running(os.Getpid(), start))
	require.True(t, Running(os.Getpid(), 0), "an unknown start is not compared")
	require.False(t, Running(os.Getpid(), start+1), "another start time: a reused pid")
	require.False(t, Running(0, 0))
	require.False(t, Running(-1, 0))
}

// A child that has exited is not running: not while it is a zombie (not
// reaped yet), and not once reaped.
func TestExitedChildIsNotRunning(t *testing.T) {
	if !knows() {
		t.Skip("no process table here")
	}
	cmd := exec.Command("sleep", "0.01")
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	start, _, known := Info(pid)
	require.True(t, known, "an unreaped child stays in the process table")
	for deadline := time.Now().Add(30 * time.Second); ; {
		_, gone, known := Info(pid)
		require.True(t, known, "an unreaped child stays in the process table")
		if gone {
			break
		}
		require.True(t, time.Now().Before(deadline), "the child never exited")
		time.Sleep(time.Millisecond)
	}
	require.False(t, Running(pid, start), "a zombie is not running")
	require.NoError(t, cmd.Wait())
	require.False(t, Running(pid, start), "a reaped child is not running")
}
