package risk

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/examples/trading/internal/msg"
)

// loose limits that no test trips unless it means to.
func loose() Limits {
	return Limits{MaxPosition: 1_000_000, MaxOrderQty: 1_000_000, OrdersPerSecond: 1e9, Burst: 1_000_000, PriceBandTicks: 1_000_000}
}

func newChecker(t testing.TB, l Limits) *Checker {
	t.Helper()
	c, err := New(2, l)
	require.NoError(t, err)
	c.OnQuote(&msg.Quote{Instrument: 0, BidPx: 999, AskPx: 1001, BidQty: 1, AskQty: 1}) // mid 1000
	return c
}

func buy(id uint64, px, qty, at int64) *msg.NewOrder {
	return &msg.NewOrder{OrderID: id, Instrument: 0, Side: msg.Buy, TimeInForce: msg.Limit, Price: px, Qty: qty, OriginNanos: at}
}

func sell(id uint64, px, qty, at int64) *msg.NewOrder {
	o := buy(id, px, qty, at)
	o.Side = msg.Sell
	return o
}

func TestNewValidates(t *testing.T) {
	bad := []Limits{
		{},
		func() Limits { l := loose(); l.MaxPosition = 0; return l }(),
		func() Limits { l := loose(); l.MaxOrderQty = -1; return l }(),
		func() Limits { l := loose(); l.OrdersPerSecond = 0; return l }(),
		func() Limits { l := loose(); l.OrdersPerSecond = 2e9; return l }(),
		func() Limits { l := loose(); l.Burst = 0; return l }(),
		func() Limits { l := loose(); l.PriceBandTicks = 0; return l }(),
		func() Limits { l := loose(); l.PriceBandBps = -1; return l }(),
	}
	for _, l := range bad {
		_, err := New(1, l)
		require.ErrorIs(t, err, ErrConfig, "%+v", l)
	}
	_, err := New(0, loose())
	require.ErrorIs(t, err, ErrConfig)
	c, err := New(1, DefaultLimits())
	require.NoError(t, err)
	require.Equal(t, DefaultLimits(), c.Limits())
}

func TestValidityAndInstrument(t *testing.T) {
	c := newChecker(t, loose())
	o := buy(1, 1000, 1, 0)
	o.Instrument = 2
	require.Equal(t, msg.ReasonUnknownInstr, c.CheckOrder(o))
	for _, mutate := range []func(o *msg.NewOrder){
		func(o *msg.NewOrder) { o.Side = 0 },
		func(o *msg.NewOrder) { o.TimeInForce = 7 },
		func(o *msg.NewOrder) { o.Price = 0 },
		func(o *msg.NewOrder) { o.Qty = 0 },
		func(o *msg.NewOrder) { o.Qty = -5 },
	} {
		o := buy(1, 1000, 1, 0)
		mutate(o)
		require.Equal(t, msg.ReasonInvalidOrder, c.CheckOrder(o))
	}
}

func TestMaxOrderQty(t *testing.T) {
	l := loose()
	l.MaxOrderQty = 10
	c := newChecker(t, l)
	require.Equal(t, msg.ReasonNone, c.CheckOrder(buy(1, 1000, 10, 0)))
	require.Equal(t, msg.ReasonMaxOrderQty, c.CheckOrder(buy(2, 1000, 11, 0)))
	require.Equal(t, msg.ReasonMaxOrderQty, c.CheckOrder(sell(3, 1000, 11, 0)))
}

func TestPriceBand(t *testing.T) {
	l := loose()
	l.PriceBandTicks = 5
	c := newChecker(t, l)
	for _, tt := range []struct {
		px   int64
		want msg.Reason
	}{{1000, msg.ReasonNone}, {1005, msg.ReasonNone}, {995, msg.ReasonNone}, {1006, msg.ReasonPriceBand}, {994, msg.ReasonPriceBand}} {
		require.Equal(t, tt.want, c.CheckOrder(buy(1, tt.px, 1, 0)), "px %d", tt.px)
		require.Equal(t, tt.want, c.CheckOrder(sell(1, tt.px, 1, 0)), "px %d", tt.px)
	}
	// The band follows the last quote.
	c.OnQuote(&msg.Quote{Instrument: 0, BidPx: 1099, AskPx: 1101})
	require.Equal(t, msg.ReasonPriceBand, c.CheckOrder(buy(1, 1000, 1, 0)))
	require.Equal(t, msg.ReasonNone, c.CheckOrder(buy(1, 1104, 1, 0)))
	// A crossed or unknown-instrument quote changes nothing.
	c.OnQuote(&msg.Quote{Instrument: 0, BidPx: 500, AskPx: 500})
	c.OnQuote(&msg.Quote{Instrument: 9, BidPx: 1, AskPx: 2})
	require.Equal(t, msg.ReasonNone, c.CheckOrder(buy(1, 1104, 1, 0)))
	// No quote yet: no reference.
	o := buy(1, 1000, 1, 0)
	o.Instrument = 1
	require.Equal(t, msg.ReasonNoReferencePx, c.CheckOrder(o))
	require.Equal(t, int64(4), c.Counts().Quotes, "every quote is counted, used or not")

	// In basis points: 50 bps of mid 1000 = 5 ticks, wider than 2 ticks.
	l.PriceBandTicks, l.PriceBandBps = 2, 50
	c = newChecker(t, l)
	require.Equal(t, msg.ReasonNone, c.CheckOrder(buy(1, 1005, 1, 0)))
	require.Equal(t, msg.ReasonPriceBand, c.CheckOrder(buy(1, 1006, 1, 0)))
}

func TestPositionCountsOpenOrdersAndFills(t *testing.T) {
	l := loose()
	l.MaxPosition = 10
	c := newChecker(t, l)
	require.Equal(t, msg.ReasonNone, c.CheckOrder(buy(1, 1000, 6, 0)))
	require.Equal(t, msg.ReasonPositionLimit, c.CheckOrder(buy(2, 1000, 5, 0)), "6 open + 5 > 10")
	require.Equal(t, msg.ReasonNone, c.CheckOrder(buy(3, 1000, 4, 0)))
	require.Equal(t, msg.ReasonNone, c.CheckOrder(sell(4, 1000, 10, 0)), "sells are checked on their own side")
	require.Equal(t, msg.ReasonPositionLimit, c.CheckOrder(sell(5, 1000, 1, 0)))

	// Order 1 fills 6: the position is +6, open buys 4.
	c.OnReport(&msg.ExecutionReport{OrderID: 1, Instrument: 0, ExecType: msg.New, Side: msg.Buy, OrderQty: 6, LeavesQty: 6})
	c.OnReport(&msg.ExecutionReport{OrderID: 1, Instrument: 0, ExecType: msg.PartialFill, Side: msg.Buy, OrderQty: 6, LastQty: 2, LeavesQty: 4, CumQty: 2})
	c.OnReport(&msg.ExecutionReport{OrderID: 1, Instrument: 0, ExecType: msg.Fill, Side: msg.Buy, OrderQty: 6, LastQty: 4, CumQty: 6})
	pos, ob, os := c.Position(0)
	require.Equal(t, []int64{6, 4, 10}, []int64{pos, ob, os})
	require.Equal(t, msg.ReasonPositionLimit, c.CheckOrder(buy(6, 1000, 1, 0)), "6 + 4 open + 1 > 10")
	// Selling is now allowed up to 10 + 6 - 10 open = 6 more.
	require.Equal(t, msg.ReasonNone, c.CheckOrder(sell(7, 1000, 6, 0)))
	require.Equal(t, msg.ReasonPositionLimit, c.CheckOrder(sell(8, 1000, 1, 0)))

	// Order 3 (buy 4) cancelled after 1 filled: releases 3 open, position 7.
	c.OnReport(&msg.ExecutionReport{OrderID: 3, Instrument: 0, ExecType: msg.PartialFill, Side: msg.Buy, OrderQty: 4, LastQty: 1, LeavesQty: 3, CumQty: 1})
	c.OnReport(&msg.ExecutionReport{OrderID: 3, Instrument: 0, ExecType: msg.Cancelled, Reason: msg.ReasonCancelRequested, Side: msg.Buy, OrderQty: 4, CumQty: 1})
	pos, ob, _ = c.Position(0)
	require.Equal(t, []int64{7, 0}, []int64{pos, ob})
	require.Equal(t, msg.ReasonNone, c.CheckOrder(buy(9, 1000, 3, 0)))
	require.Equal(t, msg.ReasonPositionLimit, c.CheckOrder(buy(10, 1000, 1, 0)))

	// The exchange rejects order 9: its 3 are released.
	c.OnReport(&msg.ExecutionReport{OrderID: 9, Instrument: 0, ExecType: msg.Rejected, Reason: msg.ReasonBookFull, Side: msg.Buy, OrderQty: 3})
	_, ob, _ = c.Position(0)
	require.Zero(t, ob)
	require.Equal(t, int64(7), c.Counts().FilledQty)

	// Cancel rejects and acks change nothing; bad reports are counted.
	c.OnReport(&msg.ExecutionReport{OrderID: 77, ExecType: msg.CancelRejected})
	c.OnReport(&msg.ExecutionReport{OrderID: 1, Instrument: 5, ExecType: msg.Fill, Side: msg.Buy, LastQty: 1})
	c.OnReport(&msg.ExecutionReport{OrderID: 1, Instrument: 0, ExecType: msg.Fill, Side: 0, LastQty: 1})
	c.OnReport(&msg.ExecutionReport{OrderID: 1, Instrument: 0, ExecType: 42})
	require.Equal(t, int64(3), c.Unknown())
	pos, _, _ = c.Position(0)
	require.Equal(t, int64(7), pos)
	pos, ob, os = c.Position(99)
	require.Zero(t, pos+ob+os)
}

func TestOrderRateTokenBucket(t *testing.T) {
	l := loose()
	l.OrdersPerSecond = 1000 // one per ms
	l.Burst = 3
	c := newChecker(t, l)
	const ms = int64(1e6)
	t0 := int64(5_000 * ms)
	// A burst of 3 at once passes, the 4th is refused.
	for i := range 3 {
		require.Equal(t, msg.ReasonNone, c.CheckOrder(buy(uint64(i+1), 1000, 1, t0)), "order %d", i)
	}
	require.Equal(t, msg.ReasonOrderRate, c.CheckOrder(buy(4, 1000, 1, t0)))
	// One interval later, one more token.
	require.Equal(t, msg.ReasonNone, c.CheckOrder(buy(5, 1000, 1, t0+ms)))
	require.Equal(t, msg.ReasonOrderRate, c.CheckOrder(buy(6, 1000, 1, t0+ms)))
	// An order rejected for another reason takes no token.
	require.Equal(t, msg.ReasonMaxOrderQty, c.CheckOrder(buy(7, 1000, 2_000_000, t0+2*ms)))
	require.Equal(t, msg.ReasonNone, c.CheckOrder(buy(8, 1000, 1, t0+2*ms)))
	// After a long quiet time the bucket is full again, not overfull.
	t1 := t0 + 1000*ms
	for i := range 3 {
		require.Equal(t, msg.ReasonNone, c.CheckOrder(buy(uint64(10+i), 1000, 1, t1)), "order %d", i)
	}
	require.Equal(t, msg.ReasonOrderRate, c.CheckOrder(buy(13, 1000, 1, t1)))
	// A sustained stream at exactly the rate always passes.
	t2 := t1 + 1000*ms
	for i := range int64(100) {
		require.Equal(t, msg.ReasonNone, c.CheckOrder(sell(uint64(100+i), 1000, 1, t2+i*ms)))
	}
	// At twice the rate, about half pass (after the burst).
	t3 := t2 + 1000*ms
	passed := 0
	for i := range int64(200) {
		if c.CheckOrder(sell(uint64(300+i), 1000, 1, t3+i*ms/2)) == msg.ReasonNone {
			passed++
		}
	}
	require.InDelta(t, 100+3, passed, 1)
	cnt := c.Counts()
	require.Equal(t, cnt.Orders, cnt.Passed+cnt.Rejected)
	require.Equal(t, cnt.Rejected-1, cnt.RejectedBy[msg.ReasonOrderRate])
}

func TestDeterministic(t *testing.T) {
	run := func() []msg.Reason {
		l := DefaultLimits()
		l.OrdersPerSecond, l.Burst = 10, 2
		c := newChecker(t, l)
		var out []msg.Reason
		for i := range int64(50) {
			out = append(out, c.CheckOrder(buy(uint64(i+1), 990+i%25, 1+i%120, i*37_000_000)))
		}
		return out
	}
	require.Equal(t, run(), run())
}

func TestCountsAndAllocations(t *testing.T) {
	c := newChecker(t, DefaultLimits())
	o := buy(1, 1000, 1, 0)
	r := &msg.ExecutionReport{OrderID: 1, Instrument: 0, ExecType: msg.Fill, Side: msg.Buy, OrderQty: 1, LastQty: 1, CumQty: 1}
	q := &msg.Quote{Instrument: 0, BidPx: 999, AskPx: 1001}
	cancel := &msg.CancelOrder{OrderID: 1}
	var at int64
	allocs := testing.AllocsPerRun(1000, func() {
		at += 1e6
		o.OriginNanos = at
		c.OnQuote(q)
		c.CheckOrder(o)
		c.OnReport(r)
		c.OnCancel(cancel)
	})
	require.Zero(t, allocs)
	cnt := c.Counts()
	require.Equal(t, cnt.Orders, cnt.Passed+cnt.Rejected)
	require.Equal(t, cnt.Cancels, cnt.Reports.Fills)
}
