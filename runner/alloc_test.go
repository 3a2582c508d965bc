package runner

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/idle"
)

// countdown does work on alternate cycles and terminates after n cycles.
type countdown struct {
	n, left int
}

func (c *countdown) RoleName() string { return "countdown" }
func (c *countdown) OnStart() error   { return nil }
func (c *countdown) OnClose() error   { return nil }
func (c *countdown) DoWork() (int, error) {
	c.left--
	if c.left <= 0 {
		return 0, agent.ErrDone
	}
	return c.left % 2, nil
}

// TestDutyCycleAllocatesNothing runs the duty-cycle loop itself (on the
// test goroutine, so AllocsPerRun sees only it) with each idle strategy.
func TestDutyCycleAllocatesNothing(t *testing.T) {
	var word atomic.Int64
	word.Store(idle.ModeBusySpin)
	fast, err := idle.NewBackoff(idle.BackoffConfig{MaxSpins: 2, MaxYields: 2, MinPark: time.Nanosecond, MaxPark: 2 * time.Nanosecond})
	require.NoError(t, err)
	for _, s := range []idle.Strategy{idle.NoOp(), idle.BusySpin(), idle.Yielding(),
		idle.Sleeping(time.Nanosecond), fast, idle.Controllable(&word)} {
		a := &countdown{n: 100}
		r, err := New(a, WithIdle(s))
		require.NoError(t, err)
		allocs := testing.AllocsPerRun(20, func() {
			a.left = a.n
			r.stop.Store(false)
			r.loop()
		})
		require.Zero(t, allocs, "%s: allocations per 100 duty cycles", s)
		require.NoError(t, r.Close()) // never started: OnClose on this goroutine
	}
}
