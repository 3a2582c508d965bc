package mailbox

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/internal/buildtags"
	"github.com/dutyrt/duty/internal/countertype"
)

// A mailbox on the heap publishes its statistics into counters, updated
// at each consumer heartbeat; the depth is the backlog before the drain.
func TestMailboxCounters(t *testing.T) {
	meta, vals, err := counters.NewRegions(32)
	require.NoError(t, err)
	mgr, err := counters.NewManager(meta, vals, counters.Config{})
	require.NoError(t, err)
	rd, err := counters.NewReader(meta, vals)
	require.NoError(t, err)
	read := func() map[string]int64 {
		got := map[string]int64{}
		require.NoError(t, rd.ForEachRecord(func(rec counters.Record) bool {
			typeID, label, v := rec.TypeID, string(rec.Label), rec.Value
			got[counters.TypeName(typeID)] = v
			require.Contains(t, label, "orders")
			return true
		}))
		return got
	}
	clk := clock.NewManual(time.UnixMilli(5_000))
	mb, err := New(Config{Name: "orders", Capacity: minCapacity, Counters: mgr, Clock: clk, HeartbeatCycles: 1})
	require.NoError(t, err)
	require.Len(t, read(), 10)

	for range 3 {
		require.NoError(t, mb.Send(1, make([]byte, 24)))
	}
	for mb.Send(1, make([]byte, 24)) == nil { // fill it: back-pressure
	}
	queued := int64(RingOf(mb).Size())
	clk.Advance(time.Millisecond)
	n, err := mb.Drain(func(*Message) Action { return Continue }, 1_000_000)
	require.NoError(t, err)
	got := read()
	require.Equal(t, queued, got["mailbox-depth"], "the backlog the heartbeat found, before its drain")
	require.Equal(t, int64(0), got["delivered"], "published before the drain")
	clk.Advance(time.Millisecond)
	require.NoError(t, mb.Heartbeat())
	got = read()
	require.Equal(t, int64(n), got["delivered"])
	require.Equal(t, RingOf(mb).ConsumerPosition(), got["consumed-bytes"])
	require.Equal(t, int64(1), got["back-pressure"])
	require.Equal(t, mb.Stats().MaxDepth, got["max-depth"])
	require.Zero(t, got["mailbox-depth"])
	require.Equal(t, int64(5_002), got["heartbeat"])
	require.Equal(t, counters.KindTimestamp, counters.KindOf(countertype.Heartbeat))

	_, err = mb.Close(Drain)
	require.NoError(t, err)
	require.ErrorIs(t, mb.Send(1, nil), ErrClosed)
	require.NoError(t, mb.CloseCounters())
	require.NoError(t, mb.CloseCounters(), "once")
	require.Empty(t, read(), "freed")
}

func TestMailboxCountersCostNoAllocation(t *testing.T) {
	if buildtags.Race {
		t.Skip("the race detector allocates")
	}
	meta, vals, err := counters.NewRegions(16)
	require.NoError(t, err)
	mgr, err := counters.NewManager(meta, vals, counters.Config{})
	require.NoError(t, err)
	clk := clock.NewManual(time.UnixMilli(1))
	mb, err := New(Config{Name: "x", Counters: mgr, Clock: clk, HeartbeatCycles: 1})
	require.NoError(t, err)
	h := func(*Message) Action { return Continue }
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		clk.Advance(time.Millisecond) // every drain publishes
		_ = mb.Send(1, make([]byte, 8))
		if _, err := mb.Drain(h, 10); err != nil {
			t.Fatal(err)
		}
	}))
}
