package ticks

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFallback runs the monotonic path on a machine that has a usable TSC.
func TestFallback(t *testing.T) {
	saved := useTSC
	useTSC = false
	defer func() { useTSC = saved }()
	require.Equal(t, "monotonic", Source())
	require.Equal(t, int64(12345), Nanos(12345), "a tick is a nanosecond")
	requireAgrees(t, 10*time.Millisecond)
}
