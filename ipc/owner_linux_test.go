package ipc

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSelfStartTimeIsTheProcessStartTime(t *testing.T) {
	start, gone, known := processInfo(os.Getpid())
	require.True(t, known)
	require.False(t, gone)
	require.NotZero(t, start)
	require.Equal(t, start, selfStartTime())
}
