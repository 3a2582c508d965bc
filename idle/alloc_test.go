package idle

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestIdleAllocatesNothing(t *testing.T) {
	var word atomic.Int64
	word.Store(ModePark)
	fast, err := NewBackoff(BackoffConfig{MaxSpins: 2, MaxYields: 2, MinPark: time.Nanosecond, MaxPark: 2 * time.Nanosecond})
	require.NoError(t, err)
	spin8, err := NewBusySpin(8)
	require.NoError(t, err)
	for _, s := range []Strategy{NoOp(), BusySpin(), spin8, Yielding(), Sleeping(time.Nanosecond), fast, Controllable(&word)} {
		n := 0
		allocs := testing.AllocsPerRun(200, func() {
			n++
			s.Idle(n % 7) // a mix of work and idle calls through every state
			s.IdleOnce()
		})
		require.Zero(t, allocs, s.String())
	}
}
