package feed

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/examples/trading/internal/msg"
)

func quotes(t testing.TB, cfg Config, n int) []msg.Quote {
	t.Helper()
	g, err := New(cfg)
	require.NoError(t, err)
	out := make([]msg.Quote, n)
	for i := range out {
		g.Next(&out[i])
	}
	require.Equal(t, int64(n), g.Counts().Quotes)
	return out
}

func TestConfig(t *testing.T) {
	for _, cfg := range []Config{{}, {Instruments: 1, MinPx: -1}, {Instruments: 1, StartPx: 5, MinPx: 10}, {Instruments: 1, MaxSpread: -1},
		{Instruments: 1, MaxSize: -2}, {Instruments: 1, Interval: -1}, {Instruments: 1 << 17}} {
		_, err := New(cfg)
		require.ErrorIs(t, err, ErrConfig, "%+v", cfg)
	}
	g, err := New(Config{Instruments: 3})
	require.NoError(t, err)
	require.Equal(t, Config{Instruments: 3, StartPx: DefaultStartPx, MinPx: DefaultMinPx, MaxSpread: DefaultMaxSpread,
		MaxSize: DefaultMaxSize, Interval: DefaultInterval}, g.Config())
}

func TestQuotesAreWellFormed(t *testing.T) {
	cfg := Config{Instruments: 5, Seed: 3, StartPx: 120, MinPx: 100, MaxSpread: 3, MaxSize: 7}
	qs := quotes(t, cfg, 50_000)
	seen := map[uint32]int{}
	lastBid := map[uint32]int64{}
	spreads := map[int64]bool{}
	var atFloor bool
	for i, q := range qs {
		require.Equal(t, uint64(i+1), q.Seq)
		require.Equal(t, int64(i+1)*DefaultInterval, q.FeedNanos, "synthetic clock")
		require.Less(t, q.Instrument, uint32(5))
		require.GreaterOrEqual(t, q.BidPx, int64(100))
		spread := q.AskPx - q.BidPx
		require.True(t, spread >= 1 && spread <= 3, "spread %d", spread)
		spreads[spread] = true
		require.True(t, q.BidQty >= 1 && q.BidQty <= 7)
		require.True(t, q.AskQty >= 1 && q.AskQty <= 7)
		if prev, ok := lastBid[q.Instrument]; ok {
			require.LessOrEqual(t, q.BidPx-prev, int64(1), "a random walk of one tick")
			require.GreaterOrEqual(t, q.BidPx-prev, int64(-1))
		} else {
			require.InDelta(t, 120, q.BidPx, 1)
		}
		lastBid[q.Instrument] = q.BidPx
		seen[q.Instrument]++
		atFloor = atFloor || q.BidPx == 100
	}
	require.Len(t, seen, 5)
	for i, n := range seen {
		require.InDelta(t, 10_000, n, 600, "instrument %d picked uniformly", i)
	}
	require.Len(t, spreads, 3)
	require.True(t, atFloor, "the walk reached MinPx (and stayed above it)")
}

func TestDeterministic(t *testing.T) {
	a := quotes(t, Config{Instruments: 4, Seed: 42}, 1000)
	b := quotes(t, Config{Instruments: 4, Seed: 42}, 1000)
	c := quotes(t, Config{Instruments: 4, Seed: 43}, 1000)
	require.Equal(t, a, b)
	require.NotEqual(t, a, c)
}

func TestClock(t *testing.T) {
	now := int64(500)
	qs := quotes(t, Config{Instruments: 1, Now: func() int64 { now += 7; return now }}, 3)
	require.Equal(t, []int64{507, 514, 521}, []int64{qs[0].FeedNanos, qs[1].FeedNanos, qs[2].FeedNanos})
	qs = quotes(t, Config{Instruments: 1, StartNanos: 1e9, Interval: 10}, 2)
	require.Equal(t, []int64{1e9 + 10, 1e9 + 20}, []int64{qs[0].FeedNanos, qs[1].FeedNanos})
}

func TestNextAllocatesNothing(t *testing.T) {
	g, err := New(Config{Instruments: 8, Now: func() int64 { return 1 }})
	require.NoError(t, err)
	var q msg.Quote
	require.Zero(t, testing.AllocsPerRun(10_000, func() { g.Next(&q) }))
}

func BenchmarkNext(b *testing.B) {
	g, _ := New(Config{Instruments: 8})
	var q msg.Quote
	b.ReportAllocs()
	for b.Loop() {
		g.Next(&q)
	}
}
