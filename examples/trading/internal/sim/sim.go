package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/dutyrt/duty/examples/trading/internal/exchange"
	"github.com/dutyrt/duty/examples/trading/internal/feed"
	"github.com/dutyrt/duty/examples/trading/internal/msg"
	"github.com/dutyrt/duty/examples/trading/internal/recon"
	"github.com/dutyrt/duty/examples/trading/internal/risk"
	"github.com/dutyrt/duty/examples/trading/internal/strategy"
	"github.com/dutyrt/duty/message"
)

// ErrInvariant is wrapped by Run when a book invariant or the report
// audit fails during the run.
var ErrInvariant = errors.New("sim: invariant violated")

// Config configures a run. Instruments and Quotes are required; the
// stage configs' Instruments fields are set from Instruments.
type Config struct {
	Instruments int
	Quotes      int    // quotes the feed generates
	Seed        uint64 // the scheduler's seed (stage seeds are in their configs)
	Feed        feed.Config
	Strategy    strategy.Config
	Limits      risk.Limits
	Exchange    exchange.Config
	// MaxQueued bounds each queue the feed sends to, as a bounded mailbox
	// does: the feed waits while one holds MaxQueued messages (default
	// 64). The other stages' sends are not bounded; the feed bounds them.
	MaxQueued int
	// CheckBooks runs the book's Check after each exchange step (on the
	// book of the message's instrument).
	CheckBooks bool
	// Audit checks every execution report against the order's history.
	Audit bool

	// loseReport, if > 0, drops the loseReport-th report on its way to the
	// strategy: the tests' proof that reconciliation notices a lost message.
	loseReport int
}

// Result is the outcome of a run.
type Result struct {
	Ledger    recon.Ledger
	Liquidity exchange.Liquidity
	Strategy  strategy.Stats
	Steps     int // scheduler steps
	MaxQueued int // the most messages queued at once, all queues together
}

type frame struct {
	typeID int32
	n      int
	b      [72]byte // the longest message, an execution report
}

type queue struct {
	frames []frame
	head   int
}

func (q *queue) len() int { return len(q.frames) - q.head }

func push[T any](q *queue, c *message.Fixed[T], v *T) {
	f := frame{typeID: c.TypeID(), n: c.Size(v)}
	c.Encode(f.b[:f.n], v)
	q.frames = append(q.frames, f)
}

func (q *queue) pop() *frame {
	f := &q.frames[q.head]
	q.head++
	if q.head == len(q.frames) {
		q.frames, q.head = q.frames[:0], 0
	}
	return f
}

type pipeline struct {
	cfg      Config
	feed     *feed.Generator
	strat    *strategy.Strategy
	risk     *risk.Checker
	exch     *exchange.Exchange
	stratQ   queue
	riskQ    queue
	exchQ    queue
	audit    map[uint64]*auditState
	auditErr error
	quotes   int
	reports  int
}

type auditState struct {
	qty, cum int64
	acked    bool
	ended    bool
}

// Run runs the pipeline until the feed has generated cfg.Quotes quotes
// and every queue is empty, and returns the counters. It returns an error
// for a bad config, a decode error, or (wrapping ErrInvariant) a failed
// book check or audit.
func Run(cfg Config) (Result, error) {
	if cfg.Instruments < 1 || cfg.Quotes < 0 {
		return Result{}, fmt.Errorf("sim: invalid config: Instruments %d, Quotes %d", cfg.Instruments, cfg.Quotes)
	}
	cfg.Feed.Instruments = cfg.Instruments
	cfg.Strategy.Instruments = cfg.Instruments
	cfg.Exchange.Instruments = cfg.Instruments
	if cfg.MaxQueued <= 0 {
		cfg.MaxQueued = 64
	}
	p := &pipeline{cfg: cfg}
	var err error
	if p.feed, err = feed.New(cfg.Feed); err != nil {
		return Result{}, err
	}
	if p.strat, err = strategy.New(cfg.Strategy); err != nil {
		return Result{}, err
	}
	if p.risk, err = risk.New(cfg.Instruments, cfg.Limits); err != nil {
		return Result{}, err
	}
	if p.exch, err = exchange.New(cfg.Exchange); err != nil {
		return Result{}, err
	}
	if cfg.Audit {
		p.audit = map[uint64]*auditState{}
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 1))
	var res Result
	for {
		queued := p.stratQ.len() + p.riskQ.len() + p.exchQ.len()
		res.MaxQueued = max(res.MaxQueued, queued)
		if queued == 0 && p.quotes == cfg.Quotes {
			break
		}
		res.Steps++
		// Pick a stage at random; one with nothing to do passes. Each
		// handles a random batch, as an agent drains up to a limit.
		batch := 1 + rng.IntN(8)
		switch rng.IntN(4) {
		case 0:
			for ; batch > 0 && p.quotes < cfg.Quotes && p.stratQ.len() < cfg.MaxQueued &&
				p.riskQ.len() < cfg.MaxQueued && p.exchQ.len() < cfg.MaxQueued; batch-- {
				p.quote()
			}
		case 1:
			for ; batch > 0 && p.stratQ.len() > 0; batch-- {
				if err := p.strategyStep(); err != nil {
					return res, err
				}
			}
		case 2:
			for ; batch > 0 && p.riskQ.len() > 0; batch-- {
				if err := p.riskStep(); err != nil {
					return res, err
				}
			}
		case 3:
			for ; batch > 0 && p.exchQ.len() > 0; batch-- {
				instrument, err := p.exchangeStep()
				if err != nil {
					return res, err
				}
				if b := p.exch.Book(instrument); cfg.CheckBooks && b != nil {
					if err := b.Check(); err != nil {
						return res, fmt.Errorf("%w: after step %d: %w", ErrInvariant, res.Steps, err)
					}
				}
			}
		}
		if p.auditErr != nil {
			return res, p.auditErr
		}
	}
	res.Ledger = recon.Ledger{
		Feed:     p.feed.Counts(),
		Strategy: p.strat.Counts(),
		Risk:     p.risk.Counts(),
		Exchange: p.exch.Counts(),
	}
	res.Ledger.Strategy.Positions = p.strat.Positions(nil)
	res.Ledger.Risk.Positions = p.risk.Positions(nil)
	res.Ledger.Exchange.Positions = p.exch.Positions(nil)
	res.Liquidity = p.exch.Liquidity()
	res.Strategy = p.strat.Stats()
	if p.audit != nil {
		var open int64
		for _, st := range p.audit {
			if st.acked && !st.ended {
				open++
			}
		}
		if open != res.Ledger.Exchange.Open {
			return res, fmt.Errorf("%w: audit counts %d open orders, the exchange %d", ErrInvariant, open, res.Ledger.Exchange.Open)
		}
	}
	return res, nil
}

// quote is the market-data agent's duty cycle: one quote to each consumer.
func (p *pipeline) quote() {
	var q msg.Quote
	p.feed.Next(&q)
	p.quotes++
	push(&p.stratQ, msg.Quotes, &q)
	push(&p.riskQ, msg.Quotes, &q)
	push(&p.exchQ, msg.Quotes, &q)
}

// strategyStep is the strategy agent's mailbox handler.
func (p *pipeline) strategyStep() error {
	f := p.stratQ.pop()
	b := f.b[:f.n]
	switch f.typeID {
	case msg.TypeQuote:
		var q msg.Quote
		if err := msg.Quotes.Decode(b, &q); err != nil {
			return err
		}
		outs := p.strat.OnQuote(&q)
		for i := range outs {
			if o := &outs[i]; o.IsCancel {
				push(&p.riskQ, msg.Cancels, &o.Cancel)
			} else {
				push(&p.riskQ, msg.NewOrders, &o.New)
			}
		}
	case msg.TypeExecutionReport:
		var r msg.ExecutionReport
		if err := msg.Reports.Decode(b, &r); err != nil {
			return err
		}
		p.strat.OnReport(&r)
	case msg.TypeRiskReject:
		var r msg.RiskReject
		if err := msg.RiskRejects.Decode(b, &r); err != nil {
			return err
		}
		p.strat.OnRiskReject(&r)
	default:
		return fmt.Errorf("sim: strategy got type %d", f.typeID)
	}
	return nil
}

// riskStep is the risk agent's mailbox handler.
func (p *pipeline) riskStep() error {
	f := p.riskQ.pop()
	b := f.b[:f.n]
	switch f.typeID {
	case msg.TypeQuote:
		var q msg.Quote
		if err := msg.Quotes.Decode(b, &q); err != nil {
			return err
		}
		p.risk.OnQuote(&q)
	case msg.TypeNewOrder:
		var o msg.NewOrder
		if err := msg.NewOrders.Decode(b, &o); err != nil {
			return err
		}
		if reason := p.risk.CheckOrder(&o); reason != msg.ReasonNone {
			var rj msg.RiskReject
			rj.RejectFor(&o, reason)
			push(&p.stratQ, msg.RiskRejects, &rj)
		} else {
			push(&p.exchQ, msg.NewOrders, &o)
		}
	case msg.TypeCancelOrder:
		var c msg.CancelOrder
		if err := msg.Cancels.Decode(b, &c); err != nil {
			return err
		}
		p.risk.OnCancel(&c)
		push(&p.exchQ, msg.Cancels, &c)
	case msg.TypeExecutionReport:
		var r msg.ExecutionReport
		if err := msg.Reports.Decode(b, &r); err != nil {
			return err
		}
		p.risk.OnReport(&r)
	default:
		return fmt.Errorf("sim: risk got type %d", f.typeID)
	}
	return nil
}

// exchangeStep is the exchange agent's mailbox handler. It returns the
// instrument of the message.
func (p *pipeline) exchangeStep() (uint32, error) {
	f := p.exchQ.pop()
	b := f.b[:f.n]
	var reports []msg.ExecutionReport
	var instrument uint32
	switch f.typeID {
	case msg.TypeQuote:
		var q msg.Quote
		if err := msg.Quotes.Decode(b, &q); err != nil {
			return 0, err
		}
		instrument, reports = q.Instrument, p.exch.OnQuote(&q)
	case msg.TypeNewOrder:
		var o msg.NewOrder
		if err := msg.NewOrders.Decode(b, &o); err != nil {
			return 0, err
		}
		if p.audit != nil {
			p.audit[o.OrderID] = &auditState{qty: o.Qty}
		}
		instrument, reports = o.Instrument, p.exch.OnNewOrder(&o)
	case msg.TypeCancelOrder:
		var c msg.CancelOrder
		if err := msg.Cancels.Decode(b, &c); err != nil {
			return 0, err
		}
		instrument, reports = c.Instrument, p.exch.OnCancel(&c)
	default:
		return 0, fmt.Errorf("sim: exchange got type %d", f.typeID)
	}
	for i := range reports {
		p.check(&reports[i])
		p.reports++
		if p.reports != p.cfg.loseReport {
			push(&p.stratQ, msg.Reports, &reports[i])
		}
		push(&p.riskQ, msg.Reports, &reports[i])
	}
	return instrument, nil
}

// check audits one report against its order's history.
func (p *pipeline) check(r *msg.ExecutionReport) {
	if p.audit == nil || p.auditErr != nil || r.ExecType == msg.CancelRejected {
		return
	}
	fail := func(format string, args ...any) {
		p.auditErr = fmt.Errorf("%w: order %d: %s (report %+v)", ErrInvariant, r.OrderID, fmt.Sprintf(format, args...), *r)
	}
	st := p.audit[r.OrderID]
	switch {
	case st == nil:
		fail("report for an order the exchange never received")
		return
	case st.ended:
		fail("report after the terminal one")
		return
	case r.OrderQty != st.qty:
		fail("order qty %d, sent %d", r.OrderQty, st.qty)
		return
	}
	switch r.ExecType {
	case msg.New:
		if st.acked {
			fail("second ack")
		}
		st.acked = true
	case msg.PartialFill, msg.Fill:
		st.cum += r.LastQty
		switch {
		case !st.acked:
			fail("fill before ack")
		case r.LastQty <= 0:
			fail("empty fill")
		case st.cum > st.qty:
			fail("filled %d of %d", st.cum, st.qty)
		case r.CumQty != st.cum || r.CumQty+r.LeavesQty != st.qty:
			fail("cum %d leaves %d, fills sum to %d", r.CumQty, r.LeavesQty, st.cum)
		case (r.ExecType == msg.Fill) != (r.LeavesQty == 0):
			fail("%s with leaves %d", r.ExecType, r.LeavesQty)
		}
	case msg.Cancelled:
		if !st.acked || r.CumQty != st.cum || r.LeavesQty != 0 {
			fail("bad cancel")
		}
	case msg.Rejected:
		if st.acked {
			fail("rejected after ack")
		}
	default:
		fail("unknown exec type")
	}
	if r.ExecType.Terminal() {
		st.ended = true
	}
}
