package agent

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// busy does one unit of work per cycle, allocation-free.
type busy struct{ n int }

func (b *busy) RoleName() string     { return "busy" }
func (b *busy) OnStart() error       { return nil }
func (b *busy) OnClose() error       { return nil }
func (b *busy) DoWork() (int, error) { b.n++; return 1, nil }

func TestHotPathsAllocateNothing(t *testing.T) {
	inv, err := NewInvoker(&busy{})
	require.NoError(t, err)
	require.NoError(t, inv.Start())
	require.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = inv.Invoke() }), "Invoker.Invoke")

	comp, err := NewComposite(&busy{}, &busy{}, &busy{})
	require.NoError(t, err)
	require.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = comp.DoWork() }), "Composite.DoWork")

	dyn, err := NewDynamicComposite("dyn", &busy{}, &busy{})
	require.NoError(t, err)
	require.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = dyn.DoWork() }), "DynamicComposite.DoWork")

	require.Zero(t, testing.AllocsPerRun(1000, func() { IsTermination(ErrDone) }), "IsTermination")
	require.NoError(t, inv.Close())
}
