package main

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/examples/trading/internal/exchange"
	"github.com/dutyrt/duty/examples/trading/internal/feed"
	"github.com/dutyrt/duty/examples/trading/internal/msg"
	"github.com/dutyrt/duty/examples/trading/internal/recon"
	"github.com/dutyrt/duty/examples/trading/internal/risk"
	"github.com/dutyrt/duty/examples/trading/internal/strategy"
	"github.com/dutyrt/duty/mailbox"
)

// The agents. Each stage of internal/sim becomes one agent.Agent with its
// own mailboxes, driven by one thread (a runner, alone or in a
// composite). Messages are the fixed-layout msg types, sent with
// mailbox.SendTyped straight into the receiver's ring and decoded with
// mailbox.DecodeTyped into a value the agent owns: nothing allocates per
// message.
//
// Mailboxes and deadlock. Every mailbox is bounded and nothing is ever
// dropped, so a sender whose receiver is full must wait. The flow has
// cycles (strategy → risk → strategy, risk → exchange → risk, ...), and
// bounded queues on a cycle can deadlock when every agent on it waits for
// the next. So each agent that receives responses has two mailboxes: "in"
// for the messages that make it send (quotes, orders, cancels) and "resp"
// for the ones it only absorbs (execution reports, risk rejects). An agent
// drains its resp mailbox on every cycle whatever else is blocked, and
// draining it never sends, so the wait-for graph is acyclic
// (strategy.in → risk.in → exchange.in → strategy.resp, risk.resp) and the
// pipeline always makes progress.
//
// Back-pressure. A handler cannot be run twice on the same message (the
// domain code has counted it, spent a rate token, opened an order), so a
// handler that cannot send everything keeps what is left as pending output
// and ends the drain (Break). The next cycle sends the pending output first
// and drains "in" only once it is gone; a delivery that finds output still
// pending is refused with mailbox.Abort, which leaves the message in the
// ring for the next drain. The pending word (1 while output is pending) is
// stored before the handler returns, hence before the ring releases the
// message, so whoever sees the message gone also sees the pending output
// (quiesce relies on it).

// send sends m and reports whether it was accepted. Back-pressure returns
// false; any other refusal (a closed mailbox, a dead consumer in another
// process) counts m in lost and returns true: the message can never be
// delivered, and waiting for it would hang the shutdown. The
// reconciliation reports lost messages.
func send[E mailbox.Encoder](b *mailbox.Mailbox, m E, lost *int64) bool {
	switch err := mailbox.SendTyped(b, m); err {
	case nil:
		return true
	case mailbox.ErrBackPressured:
		return false
	default:
		*lost++
		return true
	}
}

// inbox is a mailbox an agent drains, with its handler bound once (so a
// drain allocates nothing).
type inbox struct {
	b *mailbox.Mailbox
	h mailbox.Handler
}

// work drains up to a duty cycle's worth. Drain also keeps the consumer's
// heartbeats (and, for a mailbox in a shared file, the file's).
func (i inbox) work() (int, error) { return i.b.Drain(i.h, mailbox.DefaultDrainLimit) }

// closeAndDrain closes the mailbox to senders and delivers what is still
// queued (nothing, after the demo's drain). Owner thread, from OnClose.
func (i inbox) closeAndDrain() error {
	if _, err := i.b.Close(mailbox.Drain); err != nil {
		return err
	}
	for range 1000 {
		n, err := i.b.Drain(i.h, mailbox.DefaultDrainLimit)
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
	}
	if left := i.b.Stats().Depth; left > 0 {
		return fmt.Errorf("%w: %s: %d bytes", mailbox.ErrNotDrained, i.b.Name(), left)
	}
	return nil
}

// setWord stores v into w, a single-writer word, with a release store, and
// only when it changes.
func setWord(w *atomic.Int64, v int64) {
	if w.Load() != v {
		counters.SetWord(w, v)
	}
}

// words are the published counters of one agent: the agent stores them
// (single writer, release store), anyone reads. In-process each is on its
// own cache line; in the -ipc exchange process they are counters in a
// shared counters file (128-byte records), so the demo and dutystat see
// them.
type words []*atomic.Int64

// paddedWord fills two cache lines (the adjacent-line prefetcher fetches
// lines in pairs), so that no two agents' words share one.
type paddedWord struct {
	atomic.Int64
	_ [128 - 8]byte
}

func newWords(n int) words {
	ws := make([]paddedWord, n)
	out := make(words, n)
	for i := range ws {
		out[i] = &ws[i].Int64
	}
	return out
}

// ---------------------------------------------------------------- feed

// feedAgent is the market-data agent: it generates quotes at cfg.Rate
// (paced by the clock, in bursts of at most feedBatch per cycle) and sends
// each to the strategy, risk and the exchange. A quote refused by a full
// mailbox waits (the feed never drops); the quotes it owes meanwhile are
// capped at maxOwed, so a stall does not turn into a burst afterwards.
type feedAgent struct {
	gen   *feed.Generator
	dst   [3]*mailbox.Mailbox // strategy.in, risk.in, exchange.in
	clock func() int64
	rate  float64 // quotes per ns; 0 = unpaced
	start int64
	made  int64 // quotes generated
	owed  int64 // most quotes owed at once

	q       msg.Quote
	sent    uint8 // bit i: dst[i] has q
	pending bool
	lost    int64

	stop    atomic.Bool   // controller → feed: generate no more
	stopped *atomic.Int64 // 1 once stopped with nothing pending
	pendW   *atomic.Int64
	quotes  *atomic.Int64 // published: generated
	lostW   *atomic.Int64
}

const feedBatch = 64

func newFeedAgent(cfg config, clock func() int64, mbs *mailboxes, w words) (*feedAgent, error) {
	gen, err := feed.New(feed.Config{Instruments: cfg.Instruments, Seed: cfg.Seed, Now: clock})
	if err != nil {
		return nil, err
	}
	f := &feedAgent{
		gen:     gen,
		dst:     [3]*mailbox.Mailbox{mbs.strategyIn, mbs.riskIn, mbs.exchangeIn},
		clock:   clock,
		rate:    float64(cfg.Rate) / 1e9,
		owed:    max(feedBatch, cfg.Rate/100), // 10 ms of quotes
		stopped: w[0],
		pendW:   w[1],
		quotes:  w[2],
		lostW:   w[3],
	}
	return f, nil
}

func (f *feedAgent) RoleName() string { return roleFeed }
func (f *feedAgent) OnStart() error   { f.start = f.clock(); return nil }
func (f *feedAgent) OnClose() error   { return nil }

func (f *feedAgent) DoWork() (int, error) {
	work := 0
	if f.pending {
		if !f.flush() {
			return 0, nil
		}
		work++
	}
	if f.stop.Load() {
		setWord(f.stopped, 1)
		return work, nil
	}
	n := int64(feedBatch)
	if f.rate > 0 {
		now := f.clock()
		due := int64(float64(now-f.start)*f.rate) - f.made
		if due > f.owed {
			// Behind schedule by more than owed: forget the rest.
			f.start += int64(float64(due-f.owed) / f.rate)
			due = f.owed
		}
		n = min(n, due)
	}
	for range n {
		f.gen.Next(&f.q)
		f.made++
		f.sent = 0
		if !f.flush() {
			break
		}
		work++
	}
	counters.SetWord(f.quotes, f.made)
	return work, nil
}

// flush sends the current quote to every destination that does not have
// it yet, and reports whether all have it.
func (f *feedAgent) flush() bool {
	for i, mb := range f.dst {
		if f.sent&(1<<i) != 0 {
			continue
		}
		if !send(mb, &f.q, &f.lost) {
			f.pending = true
			setWord(f.pendW, 1)
			return false
		}
		f.sent |= 1 << i
	}
	if f.pending {
		f.pending = false
		setWord(f.pendW, 0)
	}
	setWord(f.lostW, f.lost)
	return true
}

// ------------------------------------------------------------ strategy

// strategyAgent runs the strategy: quotes (strategy.in) become orders and
// cancels for risk; reports and risk rejects (strategy.resp) update it and
// give the tick-to-trade latency (now − OriginNanos of a fill).
type strategyAgent struct {
	s      *strategy.Strategy
	in     inbox
	resp   inbox
	toRisk *mailbox.Mailbox
	clock  func() int64
	t2t    *latency
	stages *stages // nil: not recorded

	outs []strategy.Out
	next int // outs[next:] are pending

	q  msg.Quote
	r  msg.ExecutionReport
	rj msg.RiskReject

	lost     int64
	bad      int64 // undecodable or unexpected messages
	badAudit int64 // fill reports that break qty arithmetic
	auditErr string

	pendW *atomic.Int64
	pub   words // see publish
}

func newStrategyAgent(cfg config, clock func() int64, mbs *mailboxes, w words, t2t *latency) (*strategyAgent, error) {
	s, err := strategy.New(strategy.Config{Instruments: cfg.Instruments, Seed: cfg.Seed})
	if err != nil {
		return nil, err
	}
	a := &strategyAgent{s: s, toRisk: mbs.riskIn, clock: clock, t2t: t2t, pendW: w[0], pub: w[1:]}
	a.in, a.resp = inbox{mbs.strategyIn, a.onIn}, inbox{mbs.strategyResp, a.onResp}
	return a, nil
}

func (a *strategyAgent) RoleName() string { return roleStrategy }
func (a *strategyAgent) OnStart() error   { return nil }
func (a *strategyAgent) OnClose() error {
	return errors.Join(a.in.closeAndDrain(), a.resp.closeAndDrain())
}

func (a *strategyAgent) DoWork() (int, error) {
	work, err := a.resp.work()
	if a.next < len(a.outs) && a.flush() {
		work++
	}
	var err2 error
	if a.next == len(a.outs) {
		var n int
		n, err2 = a.in.work()
		work += n
	}
	a.publish()
	if err != nil || err2 != nil {
		return work, errors.Join(err, err2)
	}
	return work, nil
}

func (a *strategyAgent) flush() bool {
	for ; a.next < len(a.outs); a.next++ {
		o := &a.outs[a.next]
		if !send(a.toRisk, o, &a.lost) {
			setWord(a.pendW, 1)
			return false
		}
		if !o.IsCancel {
			a.stages.record(stageOrderOutStrategy, a.clock, o.New.OriginNanos)
		}
	}
	setWord(a.pendW, 0)
	return true
}

func (a *strategyAgent) onIn(m *mailbox.Message) mailbox.Action {
	if a.next < len(a.outs) && !a.flush() {
		return mailbox.Abort
	}
	if err := mailbox.DecodeTyped(m, msg.TypeQuote, &a.q); err != nil {
		a.bad++
		return mailbox.Continue
	}
	a.stages.record(stageQuoteAtStrategy, a.clock, a.q.FeedNanos)
	a.outs, a.next = a.s.OnQuote(&a.q), 0
	if !a.flush() {
		return mailbox.Break
	}
	return mailbox.Continue
}

func (a *strategyAgent) onResp(m *mailbox.Message) mailbox.Action {
	switch m.TypeID() {
	case msg.TypeExecutionReport:
		if err := mailbox.DecodeTyped(m, msg.TypeExecutionReport, &a.r); err != nil {
			a.bad++
			break
		}
		if a.r.ExecType == msg.PartialFill || a.r.ExecType == msg.Fill {
			a.t2t.record(a.clock(), a.r.OriginNanos)
			a.audit(&a.r)
		}
		a.s.OnReport(&a.r)
	case msg.TypeRiskReject:
		if err := mailbox.DecodeTyped(m, msg.TypeRiskReject, &a.rj); err != nil {
			a.bad++
			break
		}
		a.s.OnRiskReject(&a.rj)
	default:
		a.bad++
	}
	return mailbox.Continue
}

// audit checks a fill report's arithmetic: a fill is never empty, never
// takes the order past its quantity, and cum + leaves is the quantity.
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

// Published strategy counters (indexes into pub).
const (
	pubStratOrders = iota
	pubStratFills
	pubStratReports
	pubStratOpen
	pubStratLost
	pubStratBad
	numStratPub
)

func (a *strategyAgent) publish() {
	c := a.s.Counts()
	counters.SetWord(a.pub[pubStratOrders], c.Orders)
	counters.SetWord(a.pub[pubStratFills], c.Reports.Fills+c.Reports.PartialFills)
	counters.SetWord(a.pub[pubStratReports], c.Reports.Total())
	counters.SetWord(a.pub[pubStratOpen], c.Open)
	setWord(a.pub[pubStratLost], a.lost)
	setWord(a.pub[pubStratBad], a.bad+a.badAudit)
}

// ---------------------------------------------------------------- risk

// riskAgent runs the pre-trade checks: quotes, orders and cancels
// (risk.in); execution reports (risk.resp). A passed order or a cancel
// goes to the exchange, a refused order back to the strategy as a
// RiskReject. Each input makes at most one output, kept in one pending
// slot while its receiver is full.
type riskAgent struct {
	c    *risk.Checker
	in   inbox
	resp inbox
	toX  *mailbox.Mailbox
	toS  *mailbox.Mailbox

	pending int32 // 0, or the type id of the pending output
	clock   func() int64
	stages  *stages // nil: not recorded
	q       msg.Quote
	o       msg.NewOrder
	cx      msg.CancelOrder
	rj      msg.RiskReject
	r       msg.ExecutionReport

	lost int64
	bad  int64

	pendW *atomic.Int64
	pub   words
}

func riskLimits(cfg config) risk.Limits {
	l := risk.DefaultLimits()
	switch {
	case cfg.OrderRate > 0:
		l.OrdersPerSecond = cfg.OrderRate
	case cfg.Rate > 0:
		// At the demo's settings the strategy sends about 0.35 to 0.45
		// orders per quote, depending on how fast its orders come back
		// (it keeps at most 8 open per instrument). The limit sits in
		// that range, so a share of orders meets it: how large depends on
		// the machine's speed (set -order-rate to choose).
		l.OrdersPerSecond = max(1_000, cfg.Rate*45/100)
		l.Burst = max(50, min(l.Burst, cfg.Rate/1_000))
	}
	return l
}

func newRiskAgent(cfg config, mbs *mailboxes, w words) (*riskAgent, error) {
	c, err := risk.New(cfg.Instruments, riskLimits(cfg))
	if err != nil {
		return nil, err
	}
	a := &riskAgent{c: c, toX: mbs.exchangeIn, toS: mbs.strategyResp, pendW: w[0], pub: w[1:]}
	a.in, a.resp = inbox{mbs.riskIn, a.onIn}, inbox{mbs.riskResp, a.onResp}
	return a, nil
}

func (a *riskAgent) RoleName() string { return roleRisk }
func (a *riskAgent) OnStart() error   { return nil }
func (a *riskAgent) OnClose() error {
	return errors.Join(a.in.closeAndDrain(), a.resp.closeAndDrain())
}

func (a *riskAgent) DoWork() (int, error) {
	work, err := a.resp.work()
	if a.pending != 0 && a.flush() {
		work++
	}
	var err2 error
	if a.pending == 0 {
		var n int
		n, err2 = a.in.work()
		work += n
	}
	a.publish()
	if err != nil || err2 != nil {
		return work, errors.Join(err, err2)
	}
	return work, nil
}

func (a *riskAgent) flush() bool {
	var ok bool
	switch a.pending {
	case 0:
		return true
	case msg.TypeNewOrder:
		if ok = send(a.toX, &a.o, &a.lost); ok {
			a.stages.record(stageOrderOutRisk, a.clock, a.o.OriginNanos)
		}
	case msg.TypeCancelOrder:
		ok = send(a.toX, &a.cx, &a.lost)
	case msg.TypeRiskReject:
		ok = send(a.toS, &a.rj, &a.lost)
	}
	if !ok {
		setWord(a.pendW, 1)
		return false
	}
	a.pending = 0
	setWord(a.pendW, 0)
	return true
}

func (a *riskAgent) onIn(m *mailbox.Message) mailbox.Action {
	if a.pending != 0 && !a.flush() {
		return mailbox.Abort
	}
	switch m.TypeID() {
	case msg.TypeQuote:
		if mailbox.DecodeTyped(m, msg.TypeQuote, &a.q) != nil {
			a.bad++
			break
		}
		a.c.OnQuote(&a.q)
	case msg.TypeNewOrder:
		if mailbox.DecodeTyped(m, msg.TypeNewOrder, &a.o) != nil {
			a.bad++
			break
		}
		a.stages.record(stageOrderAtRisk, a.clock, a.o.OriginNanos)
		if reason := a.c.CheckOrder(&a.o); reason != msg.ReasonNone {
			a.rj.RejectFor(&a.o, reason)
			a.pending = msg.TypeRiskReject
		} else {
			a.pending = msg.TypeNewOrder
		}
	case msg.TypeCancelOrder:
		if mailbox.DecodeTyped(m, msg.TypeCancelOrder, &a.cx) != nil {
			a.bad++
			break
		}
		a.c.OnCancel(&a.cx)
		a.pending = msg.TypeCancelOrder
	default:
		a.bad++
	}
	if !a.flush() {
		return mailbox.Break
	}
	return mailbox.Continue
}

func (a *riskAgent) onResp(m *mailbox.Message) mailbox.Action {
	if mailbox.DecodeTyped(m, msg.TypeExecutionReport, &a.r) != nil {
		a.bad++
		return mailbox.Continue
	}
	a.c.OnReport(&a.r)
	return mailbox.Continue
}

// Published risk counters.
const (
	pubRiskRejected = iota
	pubRiskLost
	pubRiskBad
	numRiskPub
)

func (a *riskAgent) publish() {
	c := a.c.Counts()
	counters.SetWord(a.pub[pubRiskRejected], c.Rejected)
	setWord(a.pub[pubRiskLost], a.lost)
	setWord(a.pub[pubRiskBad], a.bad+a.c.Unknown())
}

// ------------------------------------------------------------ exchange

// exchangeAgent runs the exchange: quotes place the other participants'
// liquidity, orders and cancels from risk are matched; every report goes
// to the strategy and to risk. It records the tick-to-order latency
// (now − OriginNanos of each order received) and checks every book's
// invariants once a second and at the end.
type exchangeAgent struct {
	x      *exchange.Exchange
	in     inbox
	toS    *mailbox.Mailbox
	toR    *mailbox.Mailbox
	clock  func() int64
	t2o    *latency
	stages *stages // nil: not recorded

	reps  []msg.ExecutionReport
	next  int  // reps[next:] are pending
	sentS bool // reps[next] has gone to the strategy already

	q  msg.Quote
	o  msg.NewOrder
	cx msg.CancelOrder

	lastCheck int64
	checks    int64
	checkErrs int64
	checkErr  string // the first failure
	lost      int64
	bad       int64
	reports   int64 // reports made
	drop      int64 // see config.dropReport
	bend      int64 // see config.bendFill
	fillsR    int64 // fill reports sent to risk (counted only with bend)
	bent      msg.ExecutionReport
	// exitWhenClosed makes DoWork return agent.ErrDone once exchange.in is
	// closed and everything is delivered (the -ipc exchange process: the
	// demo closes the mailbox to end it).
	exitWhenClosed bool

	pendW *atomic.Int64
	pub   words
}

const checkEvery = int64(1e9) // ns between two book checks

func newExchangeAgent(cfg config, clock func() int64, mbs *mailboxes, w words, t2o *latency) (*exchangeAgent, error) {
	x, err := exchange.New(exchange.Config{Instruments: cfg.Instruments})
	if err != nil {
		return nil, err
	}
	a := &exchangeAgent{x: x, toS: mbs.strategyResp, toR: mbs.riskResp, clock: clock, t2o: t2o,
		drop: cfg.dropReport, bend: cfg.bendFill, pendW: w[0], pub: w[1:]}
	a.in = inbox{mbs.exchangeIn, a.onIn}
	return a, nil
}

func (a *exchangeAgent) RoleName() string { return roleExchange }
func (a *exchangeAgent) OnStart() error   { a.lastCheck = a.clock(); return nil }
func (a *exchangeAgent) OnClose() error   { return a.in.closeAndDrain() }

func (a *exchangeAgent) DoWork() (int, error) {
	work := 0
	if a.next < len(a.reps) && a.flush() {
		work++
	}
	var err error
	if a.next == len(a.reps) {
		var n int
		n, err = a.in.work()
		work += n
		if a.exitWhenClosed && n == 0 && err == nil && a.next == len(a.reps) &&
			a.in.b.IsClosed() && a.in.b.Stats().Depth == 0 {
			a.publish()
			return 0, agent.ErrDone
		}
	}
	a.publish()
	return work, err
}

func (a *exchangeAgent) flush() bool {
	for ; a.next < len(a.reps); a.next++ {
		r := &a.reps[a.next]
		if !a.sentS {
			if a.reports++; a.reports == a.drop {
				a.sentS = true // the test's lost message
			} else if !send(a.toS, r, &a.lost) {
				a.reports--
				setWord(a.pendW, 1)
				return false
			}
			a.sentS = true
		}
		toR := r
		if a.bend > 0 && (r.ExecType == msg.Fill || r.ExecType == msg.PartialFill) {
			if a.fillsR+1 == a.bend { // the test's wrong fill
				a.bent = *r
				a.bent.Side = r.Side.Opposite()
				toR = &a.bent
			}
		}
		if !send(a.toR, toR, &a.lost) {
			setWord(a.pendW, 1)
			return false
		}
		if a.bend > 0 && (r.ExecType == msg.Fill || r.ExecType == msg.PartialFill) {
			a.fillsR++
		}
		a.sentS = false
	}
	setWord(a.pendW, 0)
	return true
}

func (a *exchangeAgent) onIn(m *mailbox.Message) mailbox.Action {
	if a.next < len(a.reps) && !a.flush() {
		return mailbox.Abort
	}
	a.reps, a.next = nil, 0
	switch m.TypeID() {
	case msg.TypeQuote:
		if mailbox.DecodeTyped(m, msg.TypeQuote, &a.q) != nil {
			a.bad++
			break
		}
		a.reps = a.x.OnQuote(&a.q)
	case msg.TypeNewOrder:
		if mailbox.DecodeTyped(m, msg.TypeNewOrder, &a.o) != nil {
			a.bad++
			break
		}
		now := a.clock()
		a.t2o.record(now, a.o.OriginNanos)
		if a.stages != nil && stageSampled(a.o.OriginNanos) {
			a.stages[stageOrderAtExchange].record(now, a.o.OriginNanos)
		}
		a.reps = a.x.OnNewOrder(&a.o)
		if now-a.lastCheck >= checkEvery {
			a.lastCheck = now
			a.check()
		}
	case msg.TypeCancelOrder:
		if mailbox.DecodeTyped(m, msg.TypeCancelOrder, &a.cx) != nil {
			a.bad++
			break
		}
		a.reps = a.x.OnCancel(&a.cx)
	default:
		a.bad++
	}
	if !a.flush() {
		return mailbox.Break
	}
	return mailbox.Continue
}

// check runs every book's invariant check (never crossed, FIFO, fills
// below the order quantity, level sums, index). Exchange thread only, or
// after it stopped.
func (a *exchangeAgent) check() {
	a.checks++
	if err := a.x.Check(); err != nil {
		a.checkErrs++
		if a.checkErr == "" {
			a.checkErr = err.Error()
		}
	}
}

// Published exchange counters.
const (
	pubExchOrders = iota
	pubExchReports
	pubExchFills
	pubExchLost
	pubExchBad
	numExchPub
)

func (a *exchangeAgent) publish() {
	c := a.x.Counts()
	counters.SetWord(a.pub[pubExchOrders], c.Orders)
	counters.SetWord(a.pub[pubExchReports], c.Reports.Total())
	counters.SetWord(a.pub[pubExchFills], c.Reports.Fills+c.Reports.PartialFills)
	setWord(a.pub[pubExchLost], a.lost)
	setWord(a.pub[pubExchBad], a.bad)
}

// exchangeCounts is what the exchange stage contributes to the final
// table and the reconciliation, from this process or from the -ipc
// exchange process (as JSON).
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

// summary returns the exchange's counts after a final book check. Call it
// only once the agent has stopped.
func (a *exchangeAgent) summary() exchangeCounts {
	a.check()
	counts := a.x.Counts()
	counts.Positions = a.x.Positions(nil)
	return exchangeCounts{
		Counts: counts, Liquidity: a.x.Liquidity(),
		Checks: a.checks, CheckErrs: a.checkErrs, CheckErr: a.checkErr,
		Lost: a.lost, Bad: a.bad, Clamped: a.t2o.clamped(),
	}
}
