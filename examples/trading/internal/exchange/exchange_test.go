package exchange

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/examples/trading/internal/book"
	"github.com/dutyrt/duty/examples/trading/internal/msg"
)

func newExchange(t testing.TB, cfg Config) *Exchange {
	t.Helper()
	e, err := New(cfg)
	require.NoError(t, err)
	return e
}

// brief is the part of a report the scenario tests compare.
type brief struct {
	ID     uint64
	Type   msg.ExecType
	Reason msg.Reason
	Side   msg.Side
	Px     int64
	Last   int64
	Leaves int64
	Cum    int64
	Origin int64
}

func briefs(rs []msg.ExecutionReport) []brief {
	out := []brief{}
	for _, r := range rs {
		out = append(out, brief{r.OrderID, r.ExecType, r.Reason, r.Side, r.LastPx, r.LastQty, r.LeavesQty, r.CumQty, r.OriginNanos})
	}
	return out
}

func order(id uint64, s msg.Side, tif msg.TimeInForce, px, qty int64) *msg.NewOrder {
	return &msg.NewOrder{OrderID: id, Instrument: 0, Side: s, TimeInForce: tif, Price: px, Qty: qty, OriginNanos: int64(id) * 1000}
}

func TestNewConfig(t *testing.T) {
	_, err := New(Config{})
	require.ErrorIs(t, err, ErrConfig)
	_, err = New(Config{Instruments: 1, LiquidityLevels: 65})
	require.ErrorIs(t, err, ErrConfig)
	_, err = New(Config{Instruments: 1, MaxOrders: -1})
	require.ErrorIs(t, err, ErrConfig)
	e := newExchange(t, Config{Instruments: 2})
	require.Equal(t, Config{Instruments: 2, MaxOrders: DefaultMaxOrders, MaxLevels: DefaultMaxLevels, LiquidityLevels: DefaultLiquidityLevels}, e.Config())
	require.Nil(t, e.Book(2))
	require.NotNil(t, e.Book(1))
}

func TestLiquidityFromQuotes(t *testing.T) {
	e := newExchange(t, Config{Instruments: 1, LiquidityLevels: 2})
	rs := e.OnQuote(&msg.Quote{Instrument: 0, BidPx: 99, BidQty: 5, AskPx: 101, AskQty: 3, FeedNanos: 7})
	require.Empty(t, rs)
	b := e.Book(0)
	require.Equal(t, []book.Level{{Price: 99, Qty: 5, Orders: 1}, {Price: 98, Qty: 10, Orders: 1}}, b.Depth(msg.Buy, make([]book.Level, 0, 8)))
	require.Equal(t, []book.Level{{Price: 101, Qty: 3, Orders: 1}, {Price: 102, Qty: 6, Orders: 1}}, b.Depth(msg.Sell, make([]book.Level, 0, 8)))

	// The next quote replaces it.
	e.OnQuote(&msg.Quote{Instrument: 0, BidPx: 100, BidQty: 1, AskPx: 103, AskQty: 2})
	require.Equal(t, []book.Level{{Price: 100, Qty: 1, Orders: 1}, {Price: 99, Qty: 2, Orders: 1}}, b.Depth(msg.Buy, make([]book.Level, 0, 8)))
	require.Equal(t, []book.Level{{Price: 103, Qty: 2, Orders: 1}, {Price: 104, Qty: 4, Orders: 1}}, b.Depth(msg.Sell, make([]book.Level, 0, 8)))
	require.Equal(t, int64(8), e.Liquidity().Orders)

	// Bad quotes are ignored.
	for _, q := range []msg.Quote{{Instrument: 1, BidPx: 1, AskPx: 2}, {BidPx: 5, AskPx: 5}, {BidPx: 0, AskPx: 3}} {
		require.Empty(t, e.OnQuote(&q))
	}
	require.Equal(t, int64(3), e.Liquidity().BadQuotes)
	require.Equal(t, int64(5), e.Counts().Quotes)
	require.Equal(t, 4, b.Len())

	// No size, no orders on that side; LiquidityLevels < 0: none at all.
	e.OnQuote(&msg.Quote{Instrument: 0, BidPx: 100, BidQty: 0, AskPx: 103, AskQty: 2})
	require.Zero(t, b.Levels(msg.Buy))
	none := newExchange(t, Config{Instruments: 1, LiquidityLevels: -1})
	none.OnQuote(&msg.Quote{Instrument: 0, BidPx: 100, BidQty: 1, AskPx: 103, AskQty: 2})
	require.Zero(t, none.Book(0).Len())
}

func TestOrderLifecycles(t *testing.T) {
	const B, S = msg.Buy, msg.Sell
	e := newExchange(t, Config{Instruments: 1, LiquidityLevels: 3})
	e.OnQuote(&msg.Quote{Instrument: 0, BidPx: 99, BidQty: 5, AskPx: 101, AskQty: 3, FeedNanos: 50})

	// IOC across two levels, remainder cancelled.
	require.Equal(t, []brief{
		{1, msg.New, 0, B, 0, 0, 12, 0, 1000},
		{1, msg.PartialFill, 0, B, 101, 3, 9, 3, 1000},
		{1, msg.PartialFill, 0, B, 102, 6, 3, 9, 1000},
		{1, msg.Cancelled, msg.ReasonIOCRemainder, B, 0, 0, 0, 9, 1000},
	}, briefs(e.OnNewOrder(order(1, B, msg.IOC, 102, 12))))

	// IOC filled in full.
	require.Equal(t, []brief{
		{2, msg.New, 0, S, 0, 0, 4, 0, 2000},
		{2, msg.Fill, 0, S, 99, 4, 0, 4, 2000},
	}, briefs(e.OnNewOrder(order(2, S, msg.IOC, 99, 4))))

	// A passive bid inside the spread rests, then a quote moving through it
	// fills it, with the quote's timestamp as origin.
	require.Equal(t, []brief{{3, msg.New, 0, B, 0, 0, 10, 0, 3000}}, briefs(e.OnNewOrder(order(3, B, msg.Limit, 100, 10))))
	require.Equal(t, int64(1), e.Counts().Open)
	// The new participant asks are 100x2, 101x4, 102x6: only the first
	// reaches the bid at 100.
	require.Equal(t, []brief{{3, msg.PartialFill, 0, B, 100, 2, 8, 2, 77}},
		briefs(e.OnQuote(&msg.Quote{Instrument: 0, BidPx: 98, BidQty: 1, AskPx: 100, AskQty: 2, FeedNanos: 77})))
	info, ok := e.Book(0).Order(3)
	require.True(t, ok)
	require.Equal(t, int64(8), info.Leaves)

	// Cancel it: Cancelled with its cum; again: cancel-rejected.
	require.Equal(t, []brief{{3, msg.Cancelled, msg.ReasonCancelRequested, B, 0, 0, 0, 2, 9}},
		briefs(e.OnCancel(&msg.CancelOrder{OrderID: 3, Instrument: 0, OriginNanos: 9})))
	require.Equal(t, []brief{{3, msg.CancelRejected, msg.ReasonUnknownOrder, 0, 0, 0, 0, 0, 9}},
		briefs(e.OnCancel(&msg.CancelOrder{OrderID: 3, Instrument: 0, OriginNanos: 9})))
	// A participant's order cannot be cancelled by the client.
	houseID := msg.MaxClientOrderID + 1
	require.Equal(t, msg.CancelRejected, e.OnCancel(&msg.CancelOrder{OrderID: houseID, Instrument: 0})[0].ExecType)
	require.Equal(t, msg.ReasonUnknownInstr, e.OnCancel(&msg.CancelOrder{OrderID: 1, Instrument: 5})[0].Reason)

	// Self-trade: a client IOC against a resting client order reports both.
	// (participant bids are at 98 and below now: the sell at 99 rests)
	require.Equal(t, msg.New, e.OnNewOrder(order(4, S, msg.Limit, 99, 1))[0].ExecType)
	require.Equal(t, []brief{
		{5, msg.New, 0, B, 0, 0, 1, 0, 5000},
		{5, msg.Fill, 0, B, 99, 1, 0, 1, 5000},
		{4, msg.Fill, 0, S, 99, 1, 0, 1, 5000},
	}, briefs(e.OnNewOrder(order(5, B, msg.IOC, 99, 1))))

	c := e.Counts()
	require.Equal(t, int64(5), c.Orders)
	require.Equal(t, int64(0), c.Open)
	require.Equal(t, int64(4), c.Cancels)
	require.Equal(t, int64(1), c.CancelledByRequest)
	require.Equal(t, int64(3+6+4+2+1+1), c.FilledQty)
	require.Equal(t, c.Orders, c.Reports.Acks+c.Reports.Rejected)
	require.Equal(t, c.Reports.Acks, c.Reports.Fills+c.Reports.Cancelled+c.Open)
	require.NoError(t, e.Check())
}

func TestRejects(t *testing.T) {
	e := newExchange(t, Config{Instruments: 1, MaxOrders: 2, MaxLevels: 2, LiquidityLevels: -1})
	cases := []struct {
		o    msg.NewOrder
		want msg.Reason
	}{
		{msg.NewOrder{OrderID: 1, Instrument: 1, Side: msg.Buy, TimeInForce: msg.Limit, Price: 1, Qty: 1}, msg.ReasonUnknownInstr},
		{msg.NewOrder{OrderID: 0, Side: msg.Buy, TimeInForce: msg.Limit, Price: 1, Qty: 1}, msg.ReasonInvalidOrder},
		{msg.NewOrder{OrderID: msg.MaxClientOrderID + 1, Side: msg.Buy, TimeInForce: msg.Limit, Price: 1, Qty: 1}, msg.ReasonInvalidOrder},
		{msg.NewOrder{OrderID: 2, Side: 9, TimeInForce: msg.Limit, Price: 1, Qty: 1}, msg.ReasonInvalidOrder},
		{msg.NewOrder{OrderID: 3, Side: msg.Buy, TimeInForce: 0, Price: 1, Qty: 1}, msg.ReasonInvalidOrder},
		{msg.NewOrder{OrderID: 4, Side: msg.Buy, TimeInForce: msg.Limit, Price: -1, Qty: 1}, msg.ReasonInvalidOrder},
		{msg.NewOrder{OrderID: 5, Side: msg.Buy, TimeInForce: msg.Limit, Price: 1, Qty: 0}, msg.ReasonInvalidOrder},
	}
	for _, c := range cases {
		rs := e.OnNewOrder(&c.o)
		require.Len(t, rs, 1)
		require.Equal(t, msg.Rejected, rs[0].ExecType)
		require.Equal(t, c.want, rs[0].Reason, "%+v", c.o)
		require.Equal(t, c.o.OrderID, rs[0].OrderID)
		require.Zero(t, rs[0].LeavesQty)
	}
	require.Equal(t, msg.New, e.OnNewOrder(order(10, msg.Buy, msg.Limit, 10, 1))[0].ExecType)
	require.Equal(t, msg.ReasonDuplicateID, e.OnNewOrder(order(10, msg.Buy, msg.Limit, 11, 1))[0].Reason)
	require.Equal(t, msg.New, e.OnNewOrder(order(11, msg.Buy, msg.Limit, 9, 1))[0].ExecType)
	require.Equal(t, msg.ReasonBookFull, e.OnNewOrder(order(12, msg.Buy, msg.Limit, 9, 1))[0].Reason)
	c := e.Counts()
	require.Equal(t, int64(len(cases)+4), c.Orders)
	require.Equal(t, int64(len(cases)+2), c.Reports.Rejected)
	require.Equal(t, int64(2), c.Open)
}

// TestRandomLifecycles drives the exchange with random quotes, client
// orders and cancels, checks every book's invariants after each step, and
// replays every report into a per-order state machine: New first (unless
// Rejected), cumulative quantities that add up and never exceed the
// order, exactly one terminal report, nothing after it. At the end every
// order is terminal or resting, and the counters reconcile.
func TestRandomLifecycles(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			e := newExchange(t, Config{Instruments: 3, MaxOrders: 40, MaxLevels: 12, LiquidityLevels: 2})
			type state struct {
				qty, cum      int64
				acked, ended  bool
				terminalCount int
			}
			orders := map[uint64]*state{}
			var execID uint64
			mid := []int64{1000, 1000, 1000}
			nextID := uint64(1)
			var filled int64
			apply := func(rs []msg.ExecutionReport) {
				for _, r := range rs {
					execID++
					require.Equal(t, execID, r.ExecID, "exec ids are consecutive")
					if r.ExecType == msg.CancelRejected {
						continue
					}
					st := orders[r.OrderID]
					require.NotNil(t, st, "report for unknown order %d", r.OrderID)
					require.False(t, st.ended, "report after terminal: %+v", r)
					require.Equal(t, st.qty, r.OrderQty)
					switch r.ExecType {
					case msg.New:
						require.False(t, st.acked)
						st.acked = true
						require.Equal(t, st.qty, r.LeavesQty)
					case msg.PartialFill, msg.Fill:
						require.True(t, st.acked)
						require.Positive(t, r.LastQty)
						st.cum += r.LastQty
						filled += r.LastQty
						require.Equal(t, st.cum, r.CumQty)
						require.LessOrEqual(t, st.cum, st.qty, "overfill")
						require.Equal(t, st.qty, r.CumQty+r.LeavesQty)
						require.Equal(t, r.ExecType == msg.Fill, r.LeavesQty == 0)
					case msg.Cancelled:
						require.True(t, st.acked)
						require.Equal(t, st.cum, r.CumQty)
						require.Zero(t, r.LeavesQty)
					case msg.Rejected:
						require.False(t, st.acked)
					}
					if r.ExecType.Terminal() {
						st.ended = true
						st.terminalCount++
					}
				}
			}
			for step := range 4000 {
				inst := uint32(rng.IntN(3))
				switch k := rng.IntN(10); {
				case k < 3:
					mid[inst] += int64(rng.IntN(5)) - 2
					spread := int64(1 + rng.IntN(3))
					apply(e.OnQuote(&msg.Quote{Instrument: inst, BidPx: mid[inst] - spread, BidQty: int64(1 + rng.IntN(5)),
						AskPx: mid[inst] + spread, AskQty: int64(1 + rng.IntN(5)), FeedNanos: int64(step)}))
				case k < 8:
					o := &msg.NewOrder{OrderID: nextID, Instrument: inst, Side: msg.Side(1 + rng.IntN(2)), TimeInForce: msg.TimeInForce(1 + rng.IntN(2)),
						Price: mid[inst] + int64(rng.IntN(9)) - 4, Qty: int64(1 + rng.IntN(15)), OriginNanos: int64(step)}
					nextID++
					orders[o.OrderID] = &state{qty: o.Qty}
					apply(e.OnNewOrder(o))
				default:
					id := nextID - 1 - uint64(rng.IntN(30))
					apply(e.OnCancel(&msg.CancelOrder{OrderID: id, Instrument: inst, OriginNanos: int64(step)}))
				}
				require.NoError(t, e.Check(), "step %d", step)
			}
			var open, terminal int64
			for id, st := range orders {
				require.LessOrEqual(t, st.terminalCount, 1)
				inBook := false
				for i := range uint32(3) {
					if info, ok := e.Book(i).Order(id); ok {
						inBook = true
						require.Equal(t, st.cum, info.Cum)
						require.Equal(t, st.qty, info.Qty)
					}
				}
				require.Equal(t, !st.ended, inBook, "order %d: not terminal iff resting", id)
				if st.ended {
					terminal++
				} else {
					open++
				}
			}
			c := e.Counts()
			require.Equal(t, open, c.Open)
			require.Equal(t, int64(len(orders)), c.Orders)
			require.Equal(t, c.Orders, c.Reports.Acks+c.Reports.Rejected)
			require.Equal(t, c.Reports.Acks, c.Reports.Fills+c.Reports.Cancelled+c.Open)
			require.Equal(t, terminal, c.Reports.Fills+c.Reports.Cancelled+c.Reports.Rejected)
			require.Equal(t, c.Cancels, c.CancelledByRequest+c.Reports.CancelRejects)
			require.Equal(t, filled, c.FilledQty)
			require.Equal(t, uint64(c.Reports.Total()), execID)
			// The mix exercised every kind of report.
			for _, n := range []int64{c.Reports.PartialFills, c.Reports.Fills, c.Reports.Cancelled, c.CancelledByRequest, c.Reports.CancelRejects, c.Reports.Rejected, c.Open} {
				require.Positive(t, n, "%+v", c)
			}
			require.Positive(t, e.Liquidity().Refused, "book-full path for participants")
		})
	}
}

func TestSteadyStateAllocatesNothing(t *testing.T) {
	e := newExchange(t, Config{Instruments: 2, MaxOrders: 256, MaxLevels: 64})
	rng := rand.New(rand.NewPCG(1, 2))
	id := uint64(1)
	var q msg.Quote
	var o msg.NewOrder
	var c msg.CancelOrder
	stepFn := func() {
		inst := uint32(rng.IntN(2))
		q = msg.Quote{Instrument: inst, BidPx: 999, BidQty: 3, AskPx: 1001, AskQty: 3}
		e.OnQuote(&q)
		o = msg.NewOrder{OrderID: id, Instrument: inst, Side: msg.Side(1 + id%2), TimeInForce: msg.TimeInForce(1 + id%3%2), Price: 998 + int64(id%5), Qty: 5}
		e.OnNewOrder(&o)
		c = msg.CancelOrder{OrderID: id - 5, Instrument: inst}
		e.OnCancel(&c)
		id++
	}
	for range 1000 {
		stepFn()
	}
	require.Zero(t, testing.AllocsPerRun(5000, stepFn))
	require.NoError(t, e.Check())
}
