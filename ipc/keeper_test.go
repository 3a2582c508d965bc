package ipc

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/clock"
)

func TestKeeperBeatsWhatItKeeps(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewManual(time.UnixMilli(1_000_000))
	a, err := create(dir, "a", kindUserMin, []int{8}, WithClock(clk), WithLivenessTimeout(8*time.Second))
	require.NoError(t, err)
	defer a.Close()
	b, err := create(dir, "b", kindUserMin, []int{8}, WithClock(clk), WithLivenessTimeout(4*time.Second))
	require.NoError(t, err)
	defer b.Close()

	_, err = NewKeeper("keeper", -1)
	require.ErrorIs(t, err, ErrArgument)
	k, err := NewKeeper("keeper", 0, WithClock(clk))
	require.NoError(t, err)
	require.NoError(t, k.Add(a))
	require.NoError(t, k.Add(b))
	require.NoError(t, k.Add(b), "adding twice keeps it once")
	require.Equal(t, 2, len(*k.files.Load()))

	other, err := open(context.Background(), a.Path())
	require.NoError(t, err)
	defer other.Close()
	require.ErrorIs(t, k.Add(other), ErrNotOwner)

	inv, err := agent.NewInvoker(k)
	require.NoError(t, err)
	require.True(t, k.NextDeadline().IsZero(), "no deadline before the first beat")
	require.NoError(t, inv.Start()) // beats at once
	require.Equal(t, time.UnixMilli(1_001_000), k.NextDeadline(), "the next beat, a period on")
	beat := func(f *File) int64 { ms, err := f.heartbeatMillis(); require.NoError(t, err); return ms }
	require.Equal(t, int64(1_000_000), beat(a))

	// The period is a quarter of the smallest liveness timeout: 1 s.
	clk.Advance(999 * time.Millisecond)
	n, err := inv.Invoke()
	require.NoError(t, err)
	require.Zero(t, n)
	require.Equal(t, int64(1_000_000), beat(b))
	clk.Advance(time.Millisecond)
	n, err = inv.Invoke()
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, int64(1_001_000), beat(a))
	require.Equal(t, int64(1_001_000), beat(b))
	require.Equal(t, time.UnixMilli(1_002_000), k.NextDeadline())

	// A closed file is dropped without an error; a removed one is left alone.
	k.Remove(a)
	require.NoError(t, b.Close())
	clk.Advance(time.Second)
	n, err = inv.Invoke()
	require.NoError(t, err)
	require.Zero(t, n)
	require.Zero(t, len(*k.files.Load()))
	require.Equal(t, int64(1_001_000), beat(a))
	require.NoError(t, inv.Close())
}
