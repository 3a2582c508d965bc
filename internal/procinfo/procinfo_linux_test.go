package procinfo

import (
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// The pid namespace of this process is known on Linux.
func TestPidNamespaceIsKnown(t *testing.T) {
	require.NotZero(t, PidNamespace())
}

// A child that has exited and is not reaped yet is gone (a zombie), and
// its start time differs from ours only if it started later: never before.
func TestInfoOfAZombie(t *testing.T) {
	cmd := exec.Command("true")
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	// Wait for the exit without reaping: poll /proc until the state is Z.
	for range 10_000 {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		require.NoError(t, err)
		if _, state, err := ParseStat(b); err == nil && state == 'Z' {
			break
		}
	}
	start, gone, known := Info(pid)
	require.True(t, known)
	require.True(t, gone)
	require.False(t, Running(pid, 0), "a zombie is not running")
	self, _, _ := Info(os.Getpid())
	require.GreaterOrEqual(t, start, self)
	require.NoError(t, cmd.Wait())
}

func TestParseStat(t *testing.T) {
	fields := " S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 12345 20 21"
	start, state, err := ParseStat([]byte("77 (a (tricky) name)" + fields))
	require.NoError(t, err)
	require.Equal(t, uint64(12345), start)
	require.Equal(t, byte('S'), state)
	for _, bad := range []string{"", "77 no parenthesis S", "77 (x) S 1 2", "77 (x) SS" + fields[2:], "77 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 notanumber"} {
		_, _, err := ParseStat([]byte(bad))
		require.Error(t, err, "%q", bad)
	}
}
