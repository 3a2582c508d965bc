package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/fx"

	"github.com/dutyrt/duty/errlog"
	"github.com/dutyrt/duty/examples/trading/internal/msg"
	"github.com/dutyrt/duty/examples/trading/internal/recon"
	"github.com/dutyrt/duty/histogram"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/runner"
)

// printer prints the live line once a second from its own goroutine, from
// the counters the agents publish and the tick-to-trade histogram.
type printer struct {
	out   io.Writer
	words [5]*atomic.Int64 // quotes, orders, risk rejects, fills, reports
	t2t   *latency
	start time.Time
	stop  chan struct{}
	done  chan struct{}
}

func printerModule(out io.Writer) fx.Option {
	return fx.Module("printer",
		fx.Provide(func(f *feedAgent, s *strategyAgent, r *riskAgent) *printer {
			return &printer{
				out: out, t2t: s.t2t, stop: make(chan struct{}), done: make(chan struct{}),
				words: [5]*atomic.Int64{f.quotes, s.pub[pubStratOrders], r.pub[pubRiskRejected], s.pub[pubStratFills], s.pub[pubStratReports]},
			}
		}),
		// Depending on the group: started after the agents, stopped before.
		fx.Invoke(func(lc fx.Lifecycle, p *printer, _ *runner.Group) {
			lc.Append(fx.StartStopHook(func() {
				p.start = time.Now()
				go p.loop()
			}, func(ctx context.Context) error {
				close(p.stop)
				select {
				case <-p.done:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			}))
		}),
	)
}

func (p *printer) loop() {
	defer close(p.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var prev [5]int64
	prevAt := time.Now()
	for {
		select {
		case <-p.stop:
			return
		case <-tick.C:
		}
		iv := p.t2t.interval()
		now := time.Now()
		fmt.Fprintf(p.out, "t=%ds", int(now.Sub(p.start).Round(time.Second).Seconds()))
		for i, name := range []string{"quotes", "orders", "risk-rej", "fills", "reports"} {
			cur := p.words[i].Load()
			fmt.Fprintf(p.out, " %s %s/s", name, fmtRate(float64(cur-prev[i])/now.Sub(prevAt).Seconds()))
			prev[i] = cur
		}
		p50, p99 := "-", "-" // no fill this second: no latency, not 0ns
		if iv.TotalCount > 0 {
			p50, p99 = fmtNanos(percentile(iv, 500)), fmtNanos(percentile(iv, 990))
		}
		fmt.Fprintf(p.out, " t2t p50 %s p99 %s\n", p50, p99)
		prevAt = now
	}
}

// fmtRate formats a per-second rate: 950, 9.5k, 812k, 1.25M.
func fmtRate(v float64) string {
	return scaled(v, []scale{{1e3, 1, "%.0f"}, {1e4, 1e3, "%.1fk"}, {1e6, 1e3, "%.0fk"}, {math.Inf(1), 1e6, "%.2fM"}})
}

// fmtNanos formats a latency in the largest unit (ns, µs, ms, s) that
// keeps it at least 1, with at most three significant digits.
func fmtNanos(ns int64) string {
	return scaled(float64(ns), []scale{{1e3, 1, "%.0fns"}, {1e4, 1e3, "%.2fµs"}, {1e6, 1e3, "%.0fµs"},
		{1e7, 1e6, "%.1fms"}, {1e9, 1e6, "%.0fms"}, {math.Inf(1), 1e9, "%.2fs"}})
}

// scale is one unit of scaled: for values below below, divided by div.
type scale struct {
	below, div float64
	format     string
}

func scaled(v float64, units []scale) string {
	for _, u := range units {
		if v < u.below {
			return fmt.Sprintf(u.format, v/u.div)
		}
	}
	return fmt.Sprint(v)
}

// result is the end of a run: what happened and what does not add up.
type result struct {
	why      string
	problems []string // besides the ledger's equations

	feedFor, drainedIn, total time.Duration

	ledger   recon.Ledger
	x        exchangeCounts
	t2t, t2o histogram.Snapshot
	stages   []histogram.Snapshot // of tick-to-order
	mail     []mailbox.Stats
	threads  []runner.Stats
	clamped  int64
	errors   []errlog.Observation // this process's agent errors
}

// collect gathers the counters of the stopped agents (and of the exchange
// process) and the problems besides the ledger's.
func (r *result) collect(h handles) {
	if h.Exchange != nil {
		r.x = h.Exchange.summary()
	} else {
		r.x, r.problems = h.Remote.summary(r.problems)
	}
	r.ledger = recon.Ledger{Feed: h.Feed.gen.Counts(), Strategy: h.Strategy.s.Counts(), Risk: h.Risk.c.Counts(), Exchange: r.x.Counts}
	r.ledger.Strategy.Positions = h.Strategy.s.Positions(nil)
	r.ledger.Risk.Positions = h.Risk.c.Positions(nil)

	r.t2t = h.Strategy.t2t.total()
	r.clamped = r.t2t.Clamped + r.x.Clamped
	if h.Exchange != nil {
		r.t2o = h.Exchange.t2o.total()
	} else if h.Remote.sum != nil {
		r.t2o = h.Remote.sum.T2O
	}
	if st := h.Strategy.stages; st != nil {
		for _, l := range st {
			r.stages = append(r.stages, l.total())
			r.clamped += r.stages[len(r.stages)-1].Clamped
		}
		if h.Remote != nil && h.Remote.sum != nil { // the exchange's stage is the exchange process's
			r.stages[stageOrderAtExchange] = h.Remote.sum.T2OSampled
		}
	}
	for _, mb := range h.Mail.all() {
		r.mail = append(r.mail, mb.Stats())
	}
	for _, rn := range h.Group.Runners() {
		r.threads = append(r.threads, rn.Stats())
	}
	if lost := h.Feed.lost + h.Strategy.lost + h.Risk.lost + r.x.Lost; lost > 0 {
		r.problems = append(r.problems, fmt.Sprintf("%d messages lost to closed mailboxes", lost))
	}
	r.problems = append(r.problems, stageProblems(h.Strategy, h.Risk, r.x)...)
	if r.x.CheckErrs == 0 && r.x.Checks == 0 {
		r.problems = append(r.problems, "the order books were never checked")
	}
	for _, st := range r.mail {
		if st.Torn+st.Corrupt+st.Discarded > 0 {
			r.problems = append(r.problems, fmt.Sprintf("mailbox %s dropped messages: torn %d corrupt %d discarded %d", st.Name, st.Torn, st.Corrupt, st.Discarded))
		}
	}
}

// stageProblems are the stopped stages' problems besides the ledger's.
func stageProblems(s *strategyAgent, k *riskAgent, x exchangeCounts) []string {
	var p []string
	if bad := s.undelivered() + k.undelivered() + k.c.Unknown() + x.Bad; bad > 0 {
		p = append(p, fmt.Sprintf("%d messages undecodable, unexpected or about unknown orders", bad))
	}
	if s.badAudit > 0 {
		p = append(p, fmt.Sprintf("%d fill reports break the order's quantities (first: %s)", s.badAudit, s.auditErr))
	}
	if x.CheckErrs > 0 {
		p = append(p, fmt.Sprintf("book invariants violated in %d of %d checks (first: %s)", x.CheckErrs, x.Checks, x.CheckErr))
	}
	return p
}

func (r *result) ok() bool { return len(r.problems) == 0 && len(r.ledger.Check()) == 0 }

// line is the reconciliation line: the ledger's, plus the other problems.
func (r *result) line() string {
	if len(r.problems) == 0 {
		return r.ledger.Line()
	}
	return "reconciliation: " + strings.Join(append(r.ledger.Check(), r.problems...), "; ")
}

// print writes the final table, then the reconciliation line, last.
func (r *result) print(w io.Writer, cfg config) {
	mode := "in-process"
	switch {
	case cfg.NATS != "":
		mode = "nats (exchange in a second process, mailboxes bridged through NATS)"
	case cfg.IPC:
		mode = "ipc (exchange in a second process)"
	}
	var threads []string
	for _, st := range r.threads {
		if spec, ok := cfg.idle[st.Role]; ok { // the pipeline's, not the keeper's or the bridges'
			threads = append(threads, fmt.Sprintf("%s(%s)", st.Role, spec))
		}
	}
	fmt.Fprintf(w, "\nfinal: %s after %.2fs; feed ran %.2fs, drained in %v; %s; %d instruments, rate %d/s; threads %s\n",
		r.why, r.total.Seconds(), r.feedFor.Seconds(), r.drainedIn.Round(time.Millisecond), mode,
		cfg.Instruments, cfg.Rate, strings.Join(threads, " "))
	fmt.Fprintf(w, "%-9s %-24s %12s %10s\n", "stage", "counter", "count", "per-s")
	l, s, k, x := &r.ledger, r.ledger.Strategy, r.ledger.Risk, r.ledger.Exchange
	type row struct {
		stage, counter string
		n              int64
		perSec         bool
	}
	rows := []row{
		{"feed", "quotes", l.Feed.Quotes, true},
		{"strategy", "quotes-in", s.Quotes, true}, {"strategy", "orders-out", s.Orders, true},
		{"strategy", "cancels-out", s.Cancels, true}, {"strategy", "reports-in", s.Reports.Total(), true},
		{"strategy", "fills-in", s.Reports.Fills + s.Reports.PartialFills, true},
		{"strategy", "risk-rejects-in", s.RiskRejects, false}, {"strategy", "filled-qty", s.FilledQty, false},
		{"strategy", "open", s.Open, false},
		{"risk", "quotes-in", k.Quotes, true}, {"risk", "orders-in", k.Orders, true},
		{"risk", "passed", k.Passed, true}, {"risk", "rejected", k.Rejected, true},
	}
	for reason, n := range k.RejectedBy {
		if n > 0 {
			rows = append(rows, row{"risk", "rejected:" + msg.Reason(reason).String(), n, false})
		}
	}
	rows = append(rows,
		row{"risk", "cancels", k.Cancels, false}, row{"risk", "reports-in", k.Reports.Total(), false},
		row{"risk", "filled-qty", k.FilledQty, false},
		row{"exchange", "quotes-in", x.Quotes, true}, row{"exchange", "orders-in", x.Orders, true},
		row{"exchange", "cancels-in", x.Cancels, false}, row{"exchange", "reports-out", x.Reports.Total(), true},
		row{"exchange", "acks", x.Reports.Acks, false}, row{"exchange", "partial-fills", x.Reports.PartialFills, false},
		row{"exchange", "fills", x.Reports.Fills, false}, row{"exchange", "cancelled", x.Reports.Cancelled, false},
		row{"exchange", "cancelled-on-request", x.CancelledByRequest, false},
		row{"exchange", "rejected", x.Reports.Rejected, false}, row{"exchange", "cancel-rejects", x.Reports.CancelRejects, false},
		row{"exchange", "open", x.Open, false}, row{"exchange", "filled-qty", x.FilledQty, false},
		row{"exchange", "participant-orders", r.x.Liquidity.Orders, false},
		row{"exchange", "book-checks", r.x.Checks, false}, row{"exchange", "book-check-failures", r.x.CheckErrs, false})
	for _, rw := range rows {
		rate := ""
		if secs := r.feedFor.Seconds(); rw.perSec && secs > 0 {
			rate = fmt.Sprintf("%.0f", float64(rw.n)/secs)
		}
		fmt.Fprintf(w, "%-9s %-24s %12d %10s\n", rw.stage, rw.counter, rw.n, rate)
	}

	fmt.Fprintf(w, "%-14s %10s %8s %8s %8s %8s %8s\n", "latency", "count", "p50", "p90", "p99", "p99.9", "max")
	for _, hh := range []struct {
		name string
		hg   *histogram.Snapshot
	}{{"tick-to-order", &r.t2o}, {"tick-to-trade", &r.t2t}} {
		if hh.hg.TotalCount == 0 {
			fmt.Fprintf(w, "%-14s %10d %8s %8s %8s %8s %8s\n", hh.name, 0, "-", "-", "-", "-", "-")
			continue
		}
		fmt.Fprintf(w, "%-14s %10d %8s %8s %8s %8s %8s\n", hh.name, hh.hg.TotalCount,
			fmtNanos(percentile(hh.hg, 500)), fmtNanos(percentile(hh.hg, 900)), fmtNanos(percentile(hh.hg, 990)),
			fmtNanos(percentile(hh.hg, 999)), fmtNanos(hh.hg.Max))
	}
	fmt.Fprintln(w, "(tick-to-order: quote generated -> its order at the exchange; tick-to-trade: quote -> fill report back at the strategy)")
	r.printStages(w)
	if r.clamped > 0 {
		fmt.Fprintf(w, "(%d latencies outside 0..%v were recorded at the bound)\n", r.clamped, time.Duration(histConfig.Highest))
	}
	fmt.Fprintf(w, "%-14s %12s %10s %10s\n", "mailbox", "delivered", "max-depth", "back-pres")
	for _, st := range r.mail {
		fmt.Fprintf(w, "%-14s %12d %10d %10d\n", st.Name, st.Delivered, st.MaxDepth, st.BackPressured)
	}
	fmt.Fprintf(w, "%-14s %12s %10s %10s %10s\n", "thread", "cycles", "work", "idle", "max-cycle")
	for _, st := range r.threads {
		fmt.Fprintf(w, "%-14s %12d %10d %10d %10s\n", st.Role, st.DutyCycles, st.TotalWork, st.IdleCycles, fmtNanos(int64(st.MaxCycle)))
	}
	printErrors(w, r.errors)
	fmt.Fprintln(w, r.line())
}

// printStages prints where tick-to-order's time goes: for each point on
// an order's way, p50 and p99 from its quote's generation, and the step
// from the previous point's p50 (medians of steps would need a timestamp
// per hop).
func (r *result) printStages(w io.Writer) {
	if len(r.stages) == 0 {
		return
	}
	fmt.Fprintf(w, "%-24s %10s %8s %8s %8s\n", "where tick-to-order goes", "count", "p50", "+p50", "p99")
	var prev int64
	for i := range r.stages {
		hg := &r.stages[i]
		if hg.TotalCount == 0 {
			fmt.Fprintf(w, "%-24s %10d %8s %8s %8s\n", stageNames[i], 0, "-", "-", "-")
			continue
		}
		p50, step := percentile(hg, 500), "+"
		if p50 < prev {
			step = "-"
		}
		fmt.Fprintf(w, "%-24s %10d %8s %8s %8s\n", stageNames[i], hg.TotalCount,
			fmtNanos(p50), step+fmtNanos(max(p50-prev, prev-p50)), fmtNanos(percentile(hg, 990)))
		prev = p50
	}
	fmt.Fprintf(w, "(one quote in %d, from its generation to each point on its order's way; +p50: the step from the point before)\n", stageSampleEvery)
}

const errLogLength = 64 << 10 // each process's error log: a few dozen distinct errors

// agentErrors is a process's log of distinct errors, each with a count,
// in a file dutystat shows; the final table lists it.
type agentErrors struct {
	log  *errlog.Log
	read func(fn func(errlog.Observation)) (int, error)
}

func (e *agentErrors) observations() ([]errlog.Observation, error) {
	var obs []errlog.Observation
	_, err := e.read(func(o errlog.Observation) { obs = append(obs, o) })
	return obs, err
}

// printErrors writes a line per distinct error: its count and first line.
func printErrors(w io.Writer, obs []errlog.Observation) {
	if len(obs) == 0 {
		fmt.Fprintln(w, "agent errors: none")
		return
	}
	fmt.Fprintf(w, "agent errors: %d distinct\n", len(obs))
	for _, o := range obs {
		first, _, _ := strings.Cut(o.Text, "\n")
		fmt.Fprintf(w, "  %6dx  %s\n", o.Count, first)
	}
}
