package recon

import (
	"fmt"
	"strings"

	"github.com/dutyrt/duty/examples/trading/internal/msg"
)

// Reports counts execution reports by kind.
type Reports struct {
	Acks          int64 // msg.New
	PartialFills  int64
	Fills         int64
	Cancelled     int64
	Rejected      int64
	CancelRejects int64
}

// Count adds one report of kind t; an unknown kind is not counted and
// Count returns false.
func (r *Reports) Count(t msg.ExecType) bool {
	switch t {
	case msg.New:
		r.Acks++
	case msg.PartialFill:
		r.PartialFills++
	case msg.Fill:
		r.Fills++
	case msg.Cancelled:
		r.Cancelled++
	case msg.Rejected:
		r.Rejected++
	case msg.CancelRejected:
		r.CancelRejects++
	default:
		return false
	}
	return true
}

// Total returns the number of reports.
func (r Reports) Total() int64 {
	return r.Acks + r.PartialFills + r.Fills + r.Cancelled + r.Rejected + r.CancelRejects
}

// Position is one instrument's client position as a stage sees it at the
// end of a run: what it traded and what it still has in the market.
type Position struct {
	Net      int64 // filled quantity: bought − sold
	Cash     int64 // Σ LastPx·LastQty of sells − Σ of buys
	OpenBuy  int64 // unfilled quantity of live buy orders
	OpenSell int64 // unfilled quantity of live sell orders
}

// Fill adds a fill of qty at px on side s to Net and Cash.
func (p *Position) Fill(s msg.Side, px, qty int64) {
	if s == msg.Buy {
		p.Net += qty
		p.Cash -= px * qty
	} else {
		p.Net -= qty
		p.Cash += px * qty
	}
}

// Feed counts the market-data stage.
type Feed struct {
	Quotes int64 // generated (and sent to every consumer)
}

// Strategy counts the strategy stage.
type Strategy struct {
	Quotes      int64   // received
	Orders      int64   // new orders sent
	Cancels     int64   // cancel requests sent
	Reports     Reports // execution reports received
	RiskRejects int64   // risk rejects received
	FilledQty   int64   // sum of LastQty over fills received
	Open        int64   // orders sent and not yet terminal
	Unknown     int64   // reports or risk rejects for an order it does not know
	// Positions, per instrument, at the end (Strategy.Positions; Counts
	// leaves it nil).
	Positions []Position
}

// Risk counts the risk stage.
type Risk struct {
	Quotes     int64 // received
	Orders     int64 // new orders received
	Passed     int64 // forwarded to the exchange
	Rejected   int64 // refused (a RiskReject sent back)
	RejectedBy [msg.NumReasons]int64
	Cancels    int64   // cancel requests received and forwarded
	Reports    Reports // execution reports received
	FilledQty  int64
	// Positions, per instrument, at the end (Checker.Positions; Counts
	// leaves it nil).
	Positions []Position
}

// Exchange counts the exchange stage, client (strategy) orders only: the
// exchange's own participant liquidity is not part of the reconciliation.
type Exchange struct {
	Quotes             int64   // received
	Orders             int64   // client new orders received
	Cancels            int64   // client cancel requests received
	Reports            Reports // execution reports sent to the client
	CancelledByRequest int64   // of Reports.Cancelled, those answering a cancel request
	FilledQty          int64   // client filled quantity
	Open               int64   // client orders resting now
	// Positions, per instrument, at the end: Net and Cash from the trades
	// the books made, OpenBuy and OpenSell from the client orders resting
	// in them (Exchange.Positions; Counts leaves it nil).
	Positions []Position
}

// Ledger holds every stage's counters at the end of a run.
type Ledger struct {
	Feed     Feed
	Strategy Strategy
	Risk     Risk
	Exchange Exchange
}

// Check returns one line per equation that does not hold, or nil.
func (l *Ledger) Check() []string {
	var bad []string
	eq := func(what string, a, b int64, an, bn string) {
		if a != b {
			bad = append(bad, fmt.Sprintf("%s: %s %d != %s %d", what, an, a, bn, b))
		}
	}
	f, s, r, x := &l.Feed, &l.Strategy, &l.Risk, &l.Exchange

	eq("quotes", f.Quotes, s.Quotes, "generated", "strategy received")
	eq("quotes", f.Quotes, r.Quotes, "generated", "risk received")
	eq("quotes", f.Quotes, x.Quotes, "generated", "exchange received")

	eq("orders", s.Orders, r.Orders, "strategy sent", "risk received")
	eq("orders", r.Orders, r.Passed+r.Rejected, "risk received", "passed+rejected")
	var byReason int64
	for _, n := range r.RejectedBy {
		byReason += n
	}
	eq("risk rejects", r.Rejected, byReason, "total", "sum by reason")
	eq("risk rejects", r.Rejected, s.RiskRejects, "risk sent", "strategy received")
	eq("orders", r.Passed, x.Orders, "risk passed", "exchange received")

	eq("cancels", s.Cancels, r.Cancels, "strategy sent", "risk forwarded")
	eq("cancels", r.Cancels, x.Cancels, "risk forwarded", "exchange received")
	eq("cancels", x.Cancels, x.CancelledByRequest+x.Reports.CancelRejects, "exchange received", "cancelled+cancel-rejected")

	eq("exchange orders", x.Orders, x.Reports.Acks+x.Reports.Rejected, "received", "acked+rejected")
	eq("exchange orders", x.Reports.Acks, x.Reports.Fills+x.Reports.Cancelled+x.Open, "acked", "filled+cancelled+open")

	reports := func(who string, got Reports) {
		eq("acks", x.Reports.Acks, got.Acks, "exchange sent", who)
		eq("partial fills", x.Reports.PartialFills, got.PartialFills, "exchange sent", who)
		eq("fills", x.Reports.Fills, got.Fills, "exchange sent", who)
		eq("cancelled", x.Reports.Cancelled, got.Cancelled, "exchange sent", who)
		eq("rejected", x.Reports.Rejected, got.Rejected, "exchange sent", who)
		eq("cancel rejects", x.Reports.CancelRejects, got.CancelRejects, "exchange sent", who)
	}
	reports("strategy received", s.Reports)
	reports("risk received", r.Reports)

	eq("strategy orders", s.Orders, s.Reports.Fills+s.Reports.Cancelled+s.Reports.Rejected+s.RiskRejects+s.Open,
		"sent", "filled+cancelled+rejected+risk-rejected+open")
	eq("open orders", s.Open, x.Open, "strategy", "exchange")
	eq("unknown reports", s.Unknown, 0, "strategy", "expected")

	eq("filled qty", x.FilledQty, s.FilledQty, "exchange", "strategy")
	eq("filled qty", x.FilledQty, r.FilledQty, "exchange", "risk")

	// Each stage's positions against the exchange's books: a fill with
	// the wrong side, price, quantity or instrument shows here even when
	// every count above adds up.
	positions := func(who string, got []Position) {
		if len(got) != len(x.Positions) {
			bad = append(bad, fmt.Sprintf("positions: exchange has %d instruments, %s %d", len(x.Positions), who, len(got)))
			return
		}
		for i, want := range x.Positions {
			if got[i] != want {
				bad = append(bad, fmt.Sprintf("position of instrument %d: exchange %+v != %s %+v", i, want, who, got[i]))
			}
		}
	}
	positions("strategy", s.Positions)
	positions("risk", r.Positions)
	return bad
}

// Line returns "reconciliation: ok", or "reconciliation: " followed by
// Check's problems separated by "; ".
func (l *Ledger) Line() string {
	bad := l.Check()
	if len(bad) == 0 {
		return "reconciliation: ok"
	}
	return "reconciliation: " + strings.Join(bad, "; ")
}
