package message

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/buildtags"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/timer"
)

func TestAddress(t *testing.T) {
	a, err := AddressOf("orders")
	require.NoError(t, err)
	require.Equal(t, "orders", a.String())
	require.False(t, a.IsZero())
	require.True(t, Address{}.IsZero())
	for _, bad := range []string{"", "a\x00b", "0123456789012345678901234567890123"} {
		_, err := AddressOf(bad)
		require.ErrorIs(t, err, ErrAddress, bad)
	}
	full, err := AddressOf("01234567890123456789012345678901")
	require.NoError(t, err)
	require.Equal(t, "01234567890123456789012345678901", full.String())
}

func TestRegistryInProcessAndInFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	r := NewRegistry(ipc.Dir(dir))
	local := newMailbox(t)
	a, err := r.Register("local", local)
	require.NoError(t, err)
	_, err = r.Register("local", local)
	require.ErrorIs(t, err, ErrAddress)
	got, err := r.Lookup(ctx, a)
	require.NoError(t, err)
	require.Same(t, local, got)

	// A mailbox file another process owns: opened as a sender on first use.
	owner, of, err := ipc.CreateMailbox(dir, "remote", mailbox.Config{})
	require.NoError(t, err)
	defer of.Close()
	ra, _ := AddressOf("remote")
	sender, err := r.Lookup(ctx, ra)
	require.NoError(t, err)
	_, err = sender.Drain(func(*mailbox.Message) mailbox.Action { return mailbox.Continue }, 1)
	require.ErrorIs(t, err, mailbox.ErrNotConsumer, "a sender's view")
	again, err := r.Lookup(ctx, ra)
	require.NoError(t, err)
	require.Same(t, sender, again, "opened once")
	require.NoError(t, sender.Send(3, []byte("hi")))
	n, err := owner.Drain(func(m *mailbox.Message) mailbox.Action { return mailbox.Continue }, 10)
	require.NoError(t, err)
	require.Equal(t, 1, n)

	nobody, _ := AddressOf("nobody")
	_, err = r.Lookup(ctx, nobody)
	require.ErrorIs(t, err, ErrUnknownAddress)
	_, err = NewRegistry(nil).Lookup(ctx, ra)
	require.ErrorIs(t, err, ErrUnknownAddress, "no directory: only registered names")

	require.NoError(t, r.Close())
	require.ErrorIs(t, sender.Send(3, nil), mailbox.ErrClosed)
	got, err = r.Lookup(ctx, a)
	require.NoError(t, err)
	require.Same(t, local, got, "registered mailboxes stay")
}

func TestRegistryLookupDoesNotAllocate(t *testing.T) {
	if buildtags.Race {
		t.Skip("the race detector allocates")
	}
	r := NewRegistry(nil)
	a, err := r.Register("x", newMailbox(t))
	require.NoError(t, err)
	ctx := context.Background()
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		if _, err := r.Lookup(ctx, a); err != nil {
			t.Fatal(err)
		}
	}))
}

var wheelCfg = timer.Config{Resolution: 1 << 10, TicksPerWheel: 64}

func TestCallsEndAndExpire(t *testing.T) {
	var expired []string
	_, err := NewCalls[string](wheelCfg, nil)
	require.Error(t, err)
	c, err := NewCalls(wheelCfg, func(id uint64, v string) { expired = append(expired, v) })
	require.NoError(t, err)
	a, err := c.Begin(10_000, "a")
	require.NoError(t, err)
	b, err := c.Begin(20_000, "b")
	require.NoError(t, err)
	require.NotZero(t, a)
	require.NotEqual(t, a, b)
	require.Equal(t, 2, c.Pending())

	v, ok := c.End(a)
	require.True(t, ok)
	require.Equal(t, "a", v)
	_, ok = c.End(a)
	require.False(t, ok, "ended twice")

	n := 0
	for now := int64(0); now <= 40_000; now += 1 << 10 {
		n += c.Poll(now)
	}
	require.Equal(t, 1, n)
	require.Equal(t, []string{"b"}, expired)
	_, ok = c.End(b)
	require.False(t, ok, "a late reply")
	require.Zero(t, c.Pending())
}

func TestCallsDoNotAllocate(t *testing.T) {
	if buildtags.Race {
		t.Skip("the race detector allocates")
	}
	c, err := NewCalls(wheelCfg, func(uint64, int) {})
	require.NoError(t, err)
	now := int64(0)
	step := func() {
		id, err := c.Begin(now+5_000, 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Begin(now+3_000, 2); err != nil {
			t.Fatal(err)
		}
		c.End(id)
		now += 1 << 10
		c.Poll(now)
	}
	for range 1000 { // grow the maps to their working size
		step()
	}
	require.Zero(t, testing.AllocsPerRun(1000, step))
}
