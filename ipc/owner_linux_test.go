package ipc

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestProcStat(t *testing.T) {
	start, state, err := procStat(os.Getpid())
	require.NoError(t, err)
	require.NotZero(t, start)
	require.Contains(t, "RSDT", string(state), "a live process state")
	require.Equal(t, start, selfStartTime())
	_, _, err = procStat(-5)
	require.Error(t, err)
}
