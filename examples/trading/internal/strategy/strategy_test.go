package strategy

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/examples/trading/internal/msg"
)

func newStrategy(t testing.TB, cfg Config) *Strategy {
	t.Helper()
	s, err := New(cfg)
	require.NoError(t, err)
	return s
}

func quote(inst uint32, seq uint64) *msg.Quote {
	return &msg.Quote{Instrument: inst, Seq: seq, FeedNanos: int64(seq) * 1000, BidPx: 5000, BidQty: 5, AskPx: 5003, AskQty: 5}
}

func TestConfig(t *testing.T) {
	for _, cfg := range []Config{{}, {Instruments: 1, OrderPerMille: 1001}, {Instruments: 1, MaxQty: -1},
		{Instruments: 1, FirstOrderID: msg.MaxClientOrderID + 1}, {Instruments: 1, StaleQuotes: -1}} {
		_, err := New(cfg)
		require.ErrorIs(t, err, ErrConfig, "%+v", cfg)
	}
	s := newStrategy(t, Config{Instruments: 3})
	require.Equal(t, DefaultConfig(3), s.Config())
	s = newStrategy(t, Config{Instruments: 1, RoguePerMille: -1})
	require.Zero(t, s.Config().RoguePerMille)
}

func TestOrdersFollowTheRule(t *testing.T) {
	cfg := DefaultConfig(2)
	cfg.Seed = 9
	cfg.MaxOpenPerInstrument = 100_000
	cfg.MaxOpen = 100_000
	cfg.StaleQuotes = 1 << 30
	cfg.RoguePerMille = 50
	s := newStrategy(t, cfg)
	var newOrders, ioc, limit, rogueQty, rogueBand int
	lastID := uint64(0)
	for seq := uint64(1); seq <= 20_000; seq++ {
		q := quote(uint32(seq%2), seq)
		for _, out := range s.OnQuote(q) {
			require.False(t, out.IsCancel)
			o := out.New
			newOrders++
			require.Equal(t, lastID+1, o.OrderID)
			lastID = o.OrderID
			require.Equal(t, q.Instrument, o.Instrument)
			require.Equal(t, q.FeedNanos, o.OriginNanos)
			require.True(t, o.Side.Valid())
			switch {
			case o.Qty == cfg.RogueQty:
				rogueQty++
			case o.Price >= q.AskPx+cfg.RogueTicks || o.Price <= q.BidPx-cfg.RogueTicks:
				rogueBand++
				require.Equal(t, msg.IOC, o.TimeInForce)
			case o.TimeInForce == msg.IOC:
				ioc++
				require.True(t, o.Qty >= 1 && o.Qty <= cfg.MaxQty)
				if o.Side == msg.Buy {
					require.True(t, o.Price >= q.AskPx && o.Price <= q.AskPx+cfg.CrossTicks, "crossing buy %d", o.Price)
				} else {
					require.True(t, o.Price <= q.BidPx && o.Price >= q.BidPx-cfg.CrossTicks, "crossing sell %d", o.Price)
				}
			default:
				limit++
				require.Equal(t, msg.Limit, o.TimeInForce)
				if o.Side == msg.Buy {
					require.True(t, o.Price == q.BidPx || o.Price == q.BidPx+1, "passive buy %d", o.Price)
				} else {
					require.True(t, o.Price == q.AskPx || o.Price == q.AskPx-1, "passive sell %d", o.Price)
				}
			}
		}
	}
	// About OrderPerMille of quotes make an order, about 40% of them IOC,
	// about 5% rogue, half of those each kind.
	require.InDelta(t, 10_000, newOrders, 400)
	require.InDelta(t, 0.05*10_000, rogueQty+rogueBand, 100)
	require.InDelta(t, rogueQty, rogueBand, 120)
	require.InDelta(t, 0.95*0.4*10_000, ioc, 300)
	require.InDelta(t, 0.95*0.6*10_000, limit, 300)
	st := s.Stats()
	require.Equal(t, int64(rogueQty+rogueBand), st.Rogue)
	require.Equal(t, int64(ioc+rogueQty+rogueBand), st.IOC)
	require.Equal(t, int64(limit), st.Passive)
	c := s.Counts()
	require.Equal(t, int64(newOrders), c.Orders)
	require.Equal(t, int64(newOrders), c.Open)
	require.Equal(t, int64(20_000), c.Quotes)
}

// ack, fill and friends build reports for order o.
func report(o *msg.NewOrder, t msg.ExecType, last, cum int64) *msg.ExecutionReport {
	return &msg.ExecutionReport{OrderID: o.OrderID, Instrument: o.Instrument, ExecType: t, Side: o.Side,
		OrderQty: o.Qty, LastPx: o.Price, LastQty: last, CumQty: cum, LeavesQty: o.Qty - cum}
}

// firstOrder feeds quotes until the strategy sends an order of the wanted
// time in force, and returns it.
func firstOrder(t *testing.T, s *Strategy, tif msg.TimeInForce, seq *uint64) msg.NewOrder {
	t.Helper()
	for range 10_000 {
		*seq++
		for _, out := range s.OnQuote(quote(0, *seq)) {
			if !out.IsCancel && out.New.TimeInForce == tif && out.New.Qty > 1 && out.New.Qty < 100 {
				return out.New
			}
			if !out.IsCancel {
				s.OnRiskReject(&msg.RiskReject{OrderID: out.New.OrderID, Reason: msg.ReasonOrderRate})
			}
		}
	}
	t.Fatal("no order")
	return msg.NewOrder{}
}

func TestLifecycleAndPosition(t *testing.T) {
	cfg := DefaultConfig(1)
	cfg.RoguePerMille = -1
	cfg.StaleQuotes = 3
	s := newStrategy(t, cfg)
	var seq uint64
	base := s.Counts()

	// A passive order: acked, part filled, then stale: cancelled.
	o := firstOrder(t, s, msg.Limit, &seq)
	s.OnReport(report(&o, msg.New, 0, 0))
	s.OnReport(report(&o, msg.PartialFill, 1, 1))
	sign := int64(1)
	if o.Side == msg.Sell {
		sign = -1
	}
	require.Equal(t, sign, s.Position(0))
	cancels := 0
	for range 3 {
		seq++
		for _, out := range s.OnQuote(quote(0, seq)) {
			if out.IsCancel {
				require.Equal(t, o.OrderID, out.Cancel.OrderID)
				require.Equal(t, int64(seq)*1000, out.Cancel.OriginNanos)
				cancels++
			} else {
				s.OnRiskReject(&msg.RiskReject{OrderID: out.New.OrderID})
			}
		}
	}
	require.Equal(t, 1, cancels, "one cancel, not one per quote")
	s.OnReport(&msg.ExecutionReport{OrderID: o.OrderID, Instrument: 0, ExecType: msg.Cancelled, Reason: msg.ReasonCancelRequested, Side: o.Side, OrderQty: o.Qty, CumQty: 1})
	_, live := s.ids.Get(o.OrderID)
	require.False(t, live)
	// The exchange's cancel reject for an order already gone is not unknown.
	s.OnReport(&msg.ExecutionReport{OrderID: o.OrderID, ExecType: msg.CancelRejected, Reason: msg.ReasonUnknownOrder})

	// An IOC: filled in two parts.
	o2 := firstOrder(t, s, msg.IOC, &seq)
	s.OnReport(report(&o2, msg.New, 0, 0))
	s.OnReport(report(&o2, msg.PartialFill, 1, 1))
	s.OnReport(report(&o2, msg.Fill, o2.Qty-1, o2.Qty))
	_, live = s.ids.Get(o2.OrderID)
	require.False(t, live)
	sign2 := int64(1)
	if o2.Side == msg.Sell {
		sign2 = -1
	}
	require.Equal(t, sign+sign2*o2.Qty, s.Position(0))

	// Reports about orders it never sent, or already ended, are unknown.
	s.OnReport(&msg.ExecutionReport{OrderID: 999_999, ExecType: msg.Fill, LastQty: 3})
	s.OnReport(report(&o2, msg.Cancelled, 0, o2.Qty))
	s.OnRiskReject(&msg.RiskReject{OrderID: 999_999})
	s.OnReport(&msg.ExecutionReport{OrderID: o2.OrderID, ExecType: 99})
	c := s.Counts()
	require.Equal(t, int64(4), c.Unknown)
	require.Equal(t, 1+o2.Qty, c.FilledQty)
	require.Equal(t, int64(1), c.Cancels-base.Cancels)
	require.Equal(t, c.Orders, c.Reports.Fills+c.Reports.Cancelled+c.Reports.Rejected+c.RiskRejects+c.Open-3,
		"every order ended or open (minus the three unknown terminal messages above)")
	require.Zero(t, s.Open())
	require.Zero(t, s.Position(7))
}

func TestCancelRejectClearsPending(t *testing.T) {
	cfg := DefaultConfig(1)
	cfg.RoguePerMille = -1
	cfg.StaleQuotes = 1
	cfg.OrderPerMille = 1000
	cfg.MaxOpenPerInstrument = 1
	s := newStrategy(t, cfg)
	var seq uint64
	o := firstOrder(t, s, msg.Limit, &seq)
	s.OnReport(report(&o, msg.New, 0, 0))
	seq++
	outs := s.OnQuote(quote(0, seq))
	require.Len(t, outs, 1)
	require.True(t, outs[0].IsCancel)
	// Lost race (say): the cancel is rejected while the order lives on.
	s.OnReport(&msg.ExecutionReport{OrderID: o.OrderID, ExecType: msg.CancelRejected})
	seq++
	outs = s.OnQuote(quote(0, seq))
	require.Len(t, outs, 1, "cancelled again, and no new order: the instrument is at MaxOpenPerInstrument")
	require.True(t, outs[0].IsCancel)
	require.Zero(t, s.Counts().Unknown)
}

func TestSideLeansAgainstPosition(t *testing.T) {
	cfg := DefaultConfig(1)
	cfg.RoguePerMille = -1
	cfg.MaxOpenPerInstrument = 1_000_000
	cfg.MaxOpen = 100_000
	cfg.StaleQuotes = 1 << 30
	s := newStrategy(t, cfg)
	s.inst[0].pos.Net = cfg.MaxPosition // long: mostly sells
	buys, sells := 0, 0
	for seq := uint64(1); seq <= 10_000; seq++ {
		for _, out := range s.OnQuote(quote(0, seq)) {
			if out.New.Side == msg.Buy {
				buys++
			} else {
				sells++
			}
		}
	}
	require.Greater(t, sells, 10*buys, "buys %d sells %d", buys, sells)
	require.Positive(t, buys, "never below 5%")
}

func TestDeterministic(t *testing.T) {
	run := func(seed uint64) []Out {
		cfg := DefaultConfig(3)
		cfg.Seed = seed
		cfg.StaleQuotes = 2
		s := newStrategy(t, cfg)
		var all []Out
		for seq := uint64(1); seq <= 3000; seq++ {
			outs := s.OnQuote(quote(uint32(seq%3), seq))
			for _, out := range outs {
				if !out.IsCancel {
					// Ack everything, fill every third order.
					s.OnReport(report(&out.New, msg.New, 0, 0))
					if out.New.OrderID%3 == 0 {
						s.OnReport(report(&out.New, msg.Fill, out.New.Qty, out.New.Qty))
					}
				} else {
					s.OnReport(&msg.ExecutionReport{OrderID: out.Cancel.OrderID, Instrument: out.Cancel.Instrument, ExecType: msg.Cancelled, Side: msg.Buy})
				}
			}
			all = append(all, outs...)
		}
		return all
	}
	a, b := run(5), run(5)
	require.Equal(t, a, b)
	require.NotEqual(t, a, run(6))
	cancels := 0
	for _, o := range a {
		if o.IsCancel {
			cancels++
		}
	}
	require.Positive(t, cancels)
}

func TestMaxOpenSkips(t *testing.T) {
	cfg := DefaultConfig(1)
	cfg.MaxOpen = 2
	cfg.OrderPerMille = 1000
	s := newStrategy(t, cfg)
	sent := 0
	for seq := uint64(1); seq <= 10; seq++ {
		sent += len(s.OnQuote(quote(0, seq)))
	}
	require.Equal(t, 2, sent)
	require.Equal(t, int64(8), s.Stats().Skipped)
	// Bad quotes produce nothing.
	require.Empty(t, s.OnQuote(&msg.Quote{Instrument: 5, BidPx: 1, AskPx: 2}))
	require.Empty(t, s.OnQuote(&msg.Quote{Instrument: 0, BidPx: 2, AskPx: 2}))
}

func TestAllocatesNothing(t *testing.T) {
	cfg := DefaultConfig(4)
	cfg.StaleQuotes = 2
	s := newStrategy(t, cfg)
	var seq uint64
	var q msg.Quote
	var r msg.ExecutionReport
	var rj msg.RiskReject
	stepFn := func() {
		seq++
		q = *quote(uint32(seq%4), seq)
		for _, out := range s.OnQuote(&q) {
			if out.IsCancel {
				r = msg.ExecutionReport{OrderID: out.Cancel.OrderID, ExecType: msg.Cancelled}
				s.OnReport(&r)
				continue
			}
			r = *report(&out.New, msg.New, 0, 0)
			s.OnReport(&r)
			switch out.New.OrderID % 4 {
			case 0:
				r = *report(&out.New, msg.Fill, out.New.Qty, out.New.Qty)
				s.OnReport(&r)
			case 1:
				rj = msg.RiskReject{OrderID: out.New.OrderID}
				s.OnRiskReject(&rj)
			}
		}
	}
	for range 1000 {
		stepFn()
	}
	require.Zero(t, testing.AllocsPerRun(10_000, stepFn))
}

func BenchmarkOnQuote(b *testing.B) {
	cfg := DefaultConfig(8)
	s, _ := New(cfg)
	var seq uint64
	b.ReportAllocs()
	for b.Loop() {
		seq++
		for _, out := range s.OnQuote(quote(uint32(seq%8), seq)) {
			if out.IsCancel {
				s.OnReport(&msg.ExecutionReport{OrderID: out.Cancel.OrderID, ExecType: msg.Cancelled})
			} else {
				s.OnReport(report(&out.New, msg.New, 0, 0))
			}
		}
	}
}
