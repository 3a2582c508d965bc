package main

import (
	"fmt"

	"github.com/dutyrt/duty/examples/trading/internal/exchange"
	"github.com/dutyrt/duty/examples/trading/internal/msg"
	"github.com/dutyrt/duty/examples/trading/internal/recon"
	"github.com/dutyrt/duty/examples/trading/internal/risk"
	"github.com/dutyrt/duty/examples/trading/internal/strategy"
	"github.com/dutyrt/duty/mailbox"
)

// strategyAgent runs the strategy: quotes (strategy.in) become orders and
// cancels for risk; reports and risk rejects (strategy.resp) update it,
// and fills give tick-to-trade (now − OriginNanos).
type strategyAgent struct {
	*stage
	s      *strategy.Strategy
	toRisk *mailbox.Mailbox
	t2t    *latency

	outs []strategy.Out
	next int // outs[next:] are pending

	badAudit int64 // fill reports that break qty arithmetic
	auditErr string
}

func newStrategyAgent(cfg config, clock clockFunc, mbs *mailboxes, l latencies) (*strategyAgent, error) {
	s, err := strategy.New(strategy.Config{Instruments: cfg.Instruments, Seed: cfg.Seed})
	if err != nil {
		return nil, err
	}
	a := &strategyAgent{s: s, toRisk: mbs.riskIn, t2t: l.t2t}
	a.stage, err = newStage(roleStrategy, clock, newWords(1+numStratPub), l.stages, a.flush, a.publishCounts,
		drain(mbs.strategyIn, on(msg.Quotes, a.onQuote)),
		drain(mbs.strategyResp, on(msg.Reports, a.onReport), on(msg.RiskRejects, a.onRiskReject)))
	return a, err
}

func (a *strategyAgent) flush() bool {
	for ; a.next < len(a.outs); a.next++ {
		o := &a.outs[a.next]
		if o.IsCancel {
			if !send(msg.Cancels, a.toRisk, &o.Cancel, &a.lost) {
				return false
			}
		} else {
			if !send(msg.NewOrders, a.toRisk, &o.New, &a.lost) {
				return false
			}
			a.stages.record(stageOrderOutStrategy, a.clock, o.New.OriginNanos)
		}
	}
	return true
}

func (a *strategyAgent) onQuote(q *msg.Quote) error {
	a.stages.record(stageQuoteAtStrategy, a.clock, q.FeedNanos)
	a.outs, a.next = a.s.OnQuote(q), 0
	a.out.send()
	return nil
}

func (a *strategyAgent) onReport(r *msg.ExecutionReport) error {
	if r.ExecType == msg.PartialFill || r.ExecType == msg.Fill {
		a.t2t.record(a.clock(), r.OriginNanos)
		a.audit(r)
	}
	a.s.OnReport(r)
	return nil
}

func (a *strategyAgent) onRiskReject(r *msg.RiskReject) error { a.s.OnRiskReject(r); return nil }

// audit checks a fill report: never empty, never past the order's
// quantity, cum + leaves = quantity.
func (a *strategyAgent) audit(r *msg.ExecutionReport) {
	if r.LastQty > 0 && r.CumQty <= r.OrderQty && r.CumQty+r.LeavesQty == r.OrderQty &&
		(r.ExecType == msg.Fill) == (r.LeavesQty == 0) {
		return
	}
	a.badAudit++
	if a.auditErr == "" {
		a.auditErr = fmt.Sprintf("order %d: %s last %d cum %d leaves %d of %d",
			r.OrderID, r.ExecType, r.LastQty, r.CumQty, r.LeavesQty, r.OrderQty)
	}
}

// The strategy's published counters, indexes into pub.
const pubStratOrders, pubStratFills, pubStratReports, numStratPub = 0, 1, 2, 3

func (a *strategyAgent) publishCounts() {
	c := a.s.Counts()
	a.pub.set(c.Orders, c.Reports.Fills+c.Reports.PartialFills, c.Reports.Total())
}

// riskAgent runs the pre-trade checks on risk.in (quotes, orders,
// cancels) and learns from risk.resp (reports). A passed order or a cancel
// goes to the exchange, a refused order back to the strategy as a
// RiskReject: at most one output per input, pending while its receiver is
// full.
type riskAgent struct {
	*stage
	c   *risk.Checker
	toX *mailbox.Mailbox
	toS *mailbox.Mailbox

	pending int32 // 0, or the type id of the pending output
	o       msg.NewOrder
	cx      msg.CancelOrder
	rj      msg.RiskReject
}

func riskLimits(cfg config) risk.Limits {
	l := risk.DefaultLimits()
	switch {
	case cfg.OrderRate > 0:
		l.OrdersPerSecond = cfg.OrderRate
	case cfg.Rate > 0: // below the strategy's order rate: rejections happen
		l.OrdersPerSecond = max(1_000, cfg.Rate*45/100)
		l.Burst = max(50, min(l.Burst, cfg.Rate/1_000))
	}
	return l
}

func newRiskAgent(cfg config, clock clockFunc, mbs *mailboxes, l latencies) (*riskAgent, error) {
	c, err := risk.New(cfg.Instruments, riskLimits(cfg))
	if err != nil {
		return nil, err
	}
	a := &riskAgent{c: c, toX: mbs.exchangeIn, toS: mbs.strategyResp}
	a.stage, err = newStage(roleRisk, clock, newWords(1+numRiskPub), l.stages, a.flush, a.publishCounts,
		drain(mbs.riskIn, on(msg.Quotes, a.onQuote), on(msg.NewOrders, a.onOrder), on(msg.Cancels, a.onCancel)),
		drain(mbs.riskResp, on(msg.Reports, a.onReport)))
	return a, err
}

func (a *riskAgent) flush() bool {
	ok := true
	switch a.pending {
	case msg.TypeNewOrder:
		if ok = send(msg.NewOrders, a.toX, &a.o, &a.lost); ok {
			a.stages.record(stageOrderOutRisk, a.clock, a.o.OriginNanos)
		}
	case msg.TypeCancelOrder:
		ok = send(msg.Cancels, a.toX, &a.cx, &a.lost)
	case msg.TypeRiskReject:
		ok = send(msg.RiskRejects, a.toS, &a.rj, &a.lost)
	}
	if ok {
		a.pending = 0
	}
	return ok
}

func (a *riskAgent) onQuote(q *msg.Quote) error { a.c.OnQuote(q); return nil }

func (a *riskAgent) onOrder(o *msg.NewOrder) error {
	a.o = *o
	a.stages.record(stageOrderAtRisk, a.clock, a.o.OriginNanos)
	a.pending = msg.TypeNewOrder
	if reason := a.c.CheckOrder(&a.o); reason != msg.ReasonNone {
		a.rj.RejectFor(&a.o, reason)
		a.pending = msg.TypeRiskReject
	}
	a.out.send()
	return nil
}

func (a *riskAgent) onCancel(c *msg.CancelOrder) error {
	a.cx = *c
	a.c.OnCancel(&a.cx)
	a.pending = msg.TypeCancelOrder
	a.out.send()
	return nil
}

func (a *riskAgent) onReport(r *msg.ExecutionReport) error { a.c.OnReport(r); return nil }

// Risk's published counter.
const pubRiskRejected, numRiskPub = 0, 1

func (a *riskAgent) publishCounts() { a.pub.set(a.c.Counts().Rejected) }

// exchangeAgent runs the exchange: quotes place the other participants'
// liquidity, orders and cancels are matched, every report goes to the
// strategy and to risk. It records tick-to-order (now − OriginNanos of an
// order) and checks the books once a second and at the end. It ends once
// exchange.in is closed and drained.
type exchangeAgent struct {
	*stage
	x   *exchange.Exchange
	toS *mailbox.Mailbox
	toR *mailbox.Mailbox
	t2o *latency

	reps  []msg.ExecutionReport
	next  int  // reps[next:] are pending
	sentS bool // reps[next] has gone to the strategy already

	lastCheck int64
	checks    int64
	checkErrs int64
	checkErr  string // the first failure
	reports   int64  // reports made
	drop      int64  // see config.dropReport
	bend      int64  // see config.bendFill
	fillsR    int64  // fill reports sent to risk (counted only with bend)
	bent      msg.ExecutionReport
}

const checkEvery = int64(1e9) // ns between two book checks

func newExchangeAgent(cfg config, clock clockFunc, mbs *mailboxes, w exchangeWords, l latencies) (*exchangeAgent, error) {
	x, err := exchange.New(exchange.Config{Instruments: cfg.Instruments})
	if err != nil {
		return nil, err
	}
	mbs.exchangePending = w[0]
	a := &exchangeAgent{x: x, toS: mbs.strategyResp, toR: mbs.riskResp, t2o: l.t2o, drop: cfg.dropReport, bend: cfg.bendFill}
	a.stage, err = newStage(roleExchange, clock, words(w), l.stages, a.flush, a.publishCounts,
		drain(mbs.exchangeIn, on(msg.Quotes, a.onQuote), on(msg.NewOrders, a.onOrder), on(msg.Cancels, a.onCancel)),
		drained{})
	return a, err
}

func (a *exchangeAgent) OnStart() error { a.lastCheck = a.clock(); return a.stage.OnStart() }

func (a *exchangeAgent) flush() bool {
	for ; a.next < len(a.reps); a.next++ {
		r := &a.reps[a.next]
		if !a.sentS {
			if a.reports++; a.reports == a.drop {
				a.sentS = true // the test's lost message
			} else if !send(msg.Reports, a.toS, r, &a.lost) {
				a.reports--
				return false
			}
			a.sentS = true
		}
		fill := a.bend > 0 && (r.ExecType == msg.Fill || r.ExecType == msg.PartialFill)
		toR := r
		if fill && a.fillsR+1 == a.bend { // the test's wrong fill
			a.bent = *r
			a.bent.Side = r.Side.Opposite()
			toR = &a.bent
		}
		if !send(msg.Reports, a.toR, toR, &a.lost) {
			return false
		}
		if fill {
			a.fillsR++
		}
		a.sentS = false
	}
	return true
}

// answer sends reps, the exchange's reports on one message.
func (a *exchangeAgent) answer(reps []msg.ExecutionReport) error {
	a.reps, a.next = reps, 0
	a.out.send()
	return nil
}

func (a *exchangeAgent) onQuote(q *msg.Quote) error { return a.answer(a.x.OnQuote(q)) }

func (a *exchangeAgent) onCancel(c *msg.CancelOrder) error { return a.answer(a.x.OnCancel(c)) }

func (a *exchangeAgent) onOrder(o *msg.NewOrder) error {
	now := a.clock()
	a.t2o.record(now, o.OriginNanos)
	if a.stages != nil && stageSampled(o.OriginNanos) {
		a.stages[stageOrderAtExchange].record(now, o.OriginNanos)
	}
	err := a.answer(a.x.OnNewOrder(o))
	if now-a.lastCheck >= checkEvery {
		a.lastCheck = now
		a.check()
	}
	return err
}

// check runs the books' invariant checks. Exchange thread only, or after
// it stopped.
func (a *exchangeAgent) check() {
	a.checks++
	if err := a.x.Check(); err != nil {
		a.checkErrs++
		if a.checkErr == "" {
			a.checkErr = err.Error()
		}
	}
}

// The exchange's published counters (orders, reports, fills, lost: see
// exchangeLabels).
const numExchPub = 4

func (a *exchangeAgent) publishCounts() {
	c := a.x.Counts()
	a.pub.set(c.Orders, c.Reports.Total(), c.Reports.Fills+c.Reports.PartialFills, a.lost)
}

// exchangeCounts is the exchange's part of the final table and the
// reconciliation, from this process or the exchange process (JSON).
type exchangeCounts struct {
	Counts    recon.Exchange
	Liquidity exchange.Liquidity
	Checks    int64
	CheckErrs int64
	CheckErr  string
	Lost      int64
	Bad       int64
	Clamped   int64
}

// summary returns the exchange's counts after a final book check, once
// the agent has stopped.
func (a *exchangeAgent) summary() exchangeCounts {
	a.check()
	counts := a.x.Counts()
	counts.Positions = a.x.Positions(nil)
	return exchangeCounts{
		Counts: counts, Liquidity: a.x.Liquidity(),
		Checks: a.checks, CheckErrs: a.checkErrs, CheckErr: a.checkErr,
		Lost: a.lost, Bad: a.undelivered(), Clamped: a.t2o.total().Clamped,
	}
}

// stages are the points on an order's way to the exchange, each a
// histogram of the time from its quote's generation (one clock reading,
// the feed's) to that point, for one quote in stageSampleEvery. The
// exchange process has only its own.
type stages [numStages]*latency

const (
	stageQuoteAtStrategy  = iota // the strategy has decoded the quote
	stageOrderOutStrategy        // the strategy has sent the quote's order to risk
	stageOrderAtRisk             // risk has decoded the order
	stageOrderOutRisk            // risk has sent it to the exchange
	stageOrderAtExchange         // the exchange has decoded it: tick-to-order
	numStages
)

// stageNames are the stages' names in the final table.
var stageNames = [numStages]string{
	"quote at strategy", "order out of strategy", "order at risk", "order out of risk", "order at exchange",
}

// stageSampleEvery: one quote in this many is followed (a clock reading
// and a record cost about what a stage's work does).
const stageSampleEvery = 16

// stageSampled reports whether the quote stamped origin is followed: a
// hash of the timestamp, so that every agent, in any process, makes the
// same choice whatever the clock's resolution.
func stageSampled(origin int64) bool {
	return uint64(origin)*0x9e3779b97f4a7c15>>60 == 0 // the top 4 bits: 1 in 16
}

// record records stage i of the quote generated at origin if it is
// sampled; s may be nil.
func (s *stages) record(i int, clock func() int64, origin int64) {
	if s != nil && stageSampled(origin) {
		s[i].record(clock(), origin)
	}
}
