package agent

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/clock"
)

// clocked records the cached clock's value in OnStart and each DoWork and
// zeroes it after, so that a non-zero value next time proves the invoker
// set it.
type clocked struct {
	c    *clock.Cached
	seen []int64
}

func (a *clocked) RoleName() string { return "clocked" }
func (a *clocked) OnClose() error   { return nil }
func (a *clocked) OnStart() error   { a.observe(); return nil }
func (a *clocked) DoWork() (int, error) {
	a.observe()
	return 1, nil
}

func (a *clocked) observe() {
	a.seen = append(a.seen, a.c.Nanos())
	a.c.Update(0)
}

func TestInvokerCachedClock(t *testing.T) {
	var c clock.Cached
	a := &clocked{c: &c}
	inv, err := NewInvoker(a, WithCachedClock(&c))
	require.NoError(t, err)
	before := clock.System.Nanos()
	require.NoError(t, inv.Start())
	for range 5 {
		_, err := inv.Invoke()
		require.NoError(t, err)
	}
	after := clock.System.Nanos()
	require.NoError(t, inv.Close())

	require.Len(t, a.seen, 6, "OnStart and five duty cycles")
	prev := before
	for i, v := range a.seen {
		require.GreaterOrEqual(t, v, prev, "value %d: set from clock.System, never going back", i)
		require.LessOrEqual(t, v, after, "value %d", i)
		prev = v
	}
}

func TestInvokerNilCachedClock(t *testing.T) {
	inv, err := NewInvoker(&clocked{}, WithCachedClock(nil))
	require.ErrorIs(t, err, ErrArgument)
	require.Nil(t, inv)
}
