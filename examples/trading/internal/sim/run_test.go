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
	"github.com/dutyrt/duty/mailbox"
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

// queue is a stage's mailbox (on the heap, drained by the one goroutine
// of the run) and the router of its handlers.
type queue struct {
	mb *mailbox.Mailbox
	r  *message.Router
	n  int // messages queued
}

// queueCapacity is each ring's size: far more than the feed's bound lets
// queue up (a send that does not fit fails the run).
const queueCapacity = 1 << 20

func (q *queue) len() int { return q.n }

// step delivers the queue's next message to its handler.
func (q *queue) step() error {
	n, err := q.mb.DrainTo(q.r, 1)
	q.n -= n
	return err
}

// push sends *v to q.
func push[T any](q *queue, c *message.Fixed[T], v *T) error {
	if err := c.Send(q.mb, v); err != nil {
		return fmt.Errorf("sim: %s: %w", q.mb.Name(), err)
	}
	q.n++
	return nil
}

// on adds the route of c's messages to h.
func on[T any](r *message.Router, c *message.Fixed[T], h func(*T) error) error {
	return message.Handle(r, c, h)
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
	instr    uint32 // the instrument of the exchange's last message
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
	if err := p.routes(); err != nil {
		return Result{}, err
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
				if err := p.quote(); err != nil {
					return res, err
				}
			}
		case 1:
			for ; batch > 0 && p.stratQ.len() > 0; batch-- {
				if err := p.stratQ.step(); err != nil {
					return res, err
				}
			}
		case 2:
			for ; batch > 0 && p.riskQ.len() > 0; batch-- {
				if err := p.riskQ.step(); err != nil {
					return res, err
				}
			}
		case 3:
			for ; batch > 0 && p.exchQ.len() > 0; batch-- {
				if err := p.exchQ.step(); err != nil {
					return res, err
				}
				if b := p.exch.Book(p.instr); cfg.CheckBooks && b != nil {
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

// routes makes the stages' mailboxes and routes their messages to the
// handlers below.
func (p *pipeline) routes() error {
	var errs []error
	for _, q := range []struct {
		q    *queue
		name string
	}{{&p.stratQ, "strategy"}, {&p.riskQ, "risk"}, {&p.exchQ, "exchange"}} {
		mb, err := mailbox.New(mailbox.Config{Name: q.name, Capacity: queueCapacity})
		q.q.mb, q.q.r = mb, message.NewRouter()
		errs = append(errs, err)
	}
	s, k, x := p.stratQ.r, p.riskQ.r, p.exchQ.r
	errs = append(errs,
		on(s, msg.Quotes, p.strategyQuote),
		on(s, msg.Reports, func(r *msg.ExecutionReport) error { p.strat.OnReport(r); return nil }),
		on(s, msg.RiskRejects, func(r *msg.RiskReject) error { p.strat.OnRiskReject(r); return nil }),
		on(k, msg.Quotes, func(q *msg.Quote) error { p.risk.OnQuote(q); return nil }),
		on(k, msg.NewOrders, p.riskOrder),
		on(k, msg.Cancels, func(c *msg.CancelOrder) error { p.risk.OnCancel(c); return push(&p.exchQ, msg.Cancels, c) }),
		on(k, msg.Reports, func(r *msg.ExecutionReport) error { p.risk.OnReport(r); return nil }),
		on(x, msg.Quotes, func(q *msg.Quote) error { return p.exchanged(q.Instrument, p.exch.OnQuote(q)) }),
		on(x, msg.NewOrders, p.exchangeOrder),
		on(x, msg.Cancels, func(c *msg.CancelOrder) error { return p.exchanged(c.Instrument, p.exch.OnCancel(c)) }),
	)
	return errors.Join(errs...)
}

// quote is the market-data agent's duty cycle: one quote to each consumer.
func (p *pipeline) quote() error {
	var q msg.Quote
	p.feed.Next(&q)
	p.quotes++
	return errors.Join(push(&p.stratQ, msg.Quotes, &q), push(&p.riskQ, msg.Quotes, &q), push(&p.exchQ, msg.Quotes, &q))
}

// strategyQuote turns a quote into the strategy's orders and cancels.
func (p *pipeline) strategyQuote(q *msg.Quote) error {
	outs := p.strat.OnQuote(q)
	for i := range outs {
		var err error
		if o := &outs[i]; o.IsCancel {
			err = push(&p.riskQ, msg.Cancels, &o.Cancel)
		} else {
			err = push(&p.riskQ, msg.NewOrders, &o.New)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// riskOrder passes an order to the exchange or rejects it.
func (p *pipeline) riskOrder(o *msg.NewOrder) error {
	if reason := p.risk.CheckOrder(o); reason != msg.ReasonNone {
		var rj msg.RiskReject
		rj.RejectFor(o, reason)
		return push(&p.stratQ, msg.RiskRejects, &rj)
	}
	return push(&p.exchQ, msg.NewOrders, o)
}

func (p *pipeline) exchangeOrder(o *msg.NewOrder) error {
	if p.audit != nil {
		p.audit[o.OrderID] = &auditState{qty: o.Qty}
	}
	return p.exchanged(o.Instrument, p.exch.OnNewOrder(o))
}

// exchanged audits and sends the exchange's reports on a message about
// instrument.
func (p *pipeline) exchanged(instrument uint32, reports []msg.ExecutionReport) error {
	p.instr = instrument
	for i := range reports {
		p.check(&reports[i])
		p.reports++
		if p.reports != p.cfg.loseReport {
			if err := push(&p.stratQ, msg.Reports, &reports[i]); err != nil {
				return err
			}
		}
		if err := push(&p.riskQ, msg.Reports, &reports[i]); err != nil {
			return err
		}
	}
	return nil
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
