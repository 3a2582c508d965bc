package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"go.uber.org/fx"

	"github.com/dutyrt/duty/errlog"
	"github.com/dutyrt/duty/examples/trading/internal/msg"
	"github.com/dutyrt/duty/examples/trading/internal/recon"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/runner"
)

// printer prints the live line once a second, from a goroutine of its own
// (on the Go scheduler, not an agent thread) that an fx hook starts and
// stops. It reads the counters the agents publish with release stores and
// takes their latency histograms through latency's hand-over.
type printer struct {
	out   io.Writer
	words struct {
		quotes, orders, riskRejected, fills, reports *atomic.Int64
	}
	t2t, t2o *latency // t2o is nil with -ipc (the exchange is elsewhere)

	// Merged over the whole run; the printer's until it stops, then run's.
	totalT2T, totalT2O *hdrhistogram.Histogram
	interval           *hdrhistogram.Histogram

	start time.Time
	stop  chan struct{}
	done  chan struct{}
}

func printerModule(out io.Writer) fx.Option {
	return fx.Module("printer",
		fx.Provide(func(s stageAgents) *printer {
			p := &printer{
				out: out, t2t: s.Strategy.t2t,
				totalT2T: newHist(), totalT2O: newHist(), interval: newHist(),
				stop: make(chan struct{}), done: make(chan struct{}),
			}
			p.words.quotes = s.Feed.quotes
			p.words.orders = s.Strategy.pub[pubStratOrders]
			p.words.fills = s.Strategy.pub[pubStratFills]
			p.words.reports = s.Strategy.pub[pubStratReports]
			p.words.riskRejected = s.Risk.pub[pubRiskRejected]
			if s.Exchange != nil {
				p.t2o = s.Exchange.t2o
			}
			return p
		}),
		// Depending on the runner group puts this hook after dutyfx.Runners's:
		// the printer starts after the agents and stops before them.
		fx.Invoke(func(lc fx.Lifecycle, p *printer, _ *runner.Group) {
			lc.Append(fx.Hook{
				OnStart: func(context.Context) error {
					p.start = time.Now()
					go p.loop()
					return nil
				},
				OnStop: func(ctx context.Context) error {
					close(p.stop)
					select {
					case <-p.done:
						return nil
					case <-ctx.Done():
						return ctx.Err()
					}
				},
			})
		}),
	)
}

func (p *printer) loop() {
	defer close(p.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	prev := p.read()
	prevAt := time.Now()
	for {
		select {
		case <-p.stop:
			return
		case <-tick.C:
		}
		p.interval.Reset()
		p.t2t.take(p.interval, p.totalT2T)
		if p.t2o != nil {
			p.t2o.take(p.totalT2O)
		}
		cur, now := p.read(), time.Now()
		secs := now.Sub(prevAt).Seconds()
		rate := func(i int) string { return fmtRate(float64(cur[i]-prev[i]) / secs) }
		// No fill handed over this second: no latency to show ("-"), not 0ns.
		p50, p99 := "-", "-"
		if p.interval.TotalCount() > 0 {
			p50, p99 = fmtNanos(percentile(p.interval, 500)), fmtNanos(percentile(p.interval, 990))
		}
		fmt.Fprintf(p.out, "t=%ds quotes %s/s orders %s/s risk-rej %s/s fills %s/s reports %s/s t2t p50 %s p99 %s\n",
			int(now.Sub(p.start).Round(time.Second).Seconds()),
			rate(0), rate(1), rate(2), rate(3), rate(4), p50, p99)
		prev, prevAt = cur, now
	}
}

func (p *printer) read() [5]int64 {
	w := &p.words
	return [5]int64{w.quotes.Load(), w.orders.Load(), w.riskRejected.Load(), w.fills.Load(), w.reports.Load()}
}

// fmtRate formats a per-second rate: 950, 9.5k, 812k, 1.25M.
func fmtRate(v float64) string {
	return scaled(v, []scale{{1e3, 1, "%.0f"}, {1e4, 1e3, "%.1fk"}, {1e6, 1e3, "%.0fk"}, {math.Inf(1), 1e6, "%.2fM"}})
}

// fmtNanos formats a latency in the largest unit it reaches (ns, µs, ms,
// s), with two decimals below ten µs (where the demo's stages differ by
// tens of ns), one below ten ms, none otherwise, and two in seconds.
func fmtNanos(ns int64) string {
	return scaled(float64(ns), []scale{{1e3, 1, "%.0fns"}, {1e4, 1e3, "%.2fµs"}, {1e6, 1e3, "%.0fµs"},
		{1e7, 1e6, "%.1fms"}, {1e9, 1e6, "%.0fms"}, {math.Inf(1), 1e9, "%.2fs"}})
}

// scale is one unit of scaled: for values below below, divided by div.
type scale struct {
	below, div float64
	format     string
}

// scaled formats v in the first of units it is below.
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
	t2t, t2o *hdrhistogram.Histogram
	stages   []*hdrhistogram.Histogram // stages of tick-to-order (none in tests)
	mail     []mailbox.Stats
	threads  []runner.Stats
	clamped  int64
	errors   []errlog.Observation // this process's agent errors (the exchange process keeps its own)
}

// collect gathers the counters of the stopped agents (and of the -ipc
// exchange process) and the problems besides the ledger's.
func (r *result) collect(cfg config, h handles) {
	if h.Exchange != nil {
		r.x = h.Exchange.summary()
	} else {
		r.x, r.problems = h.Remote.summary(r.problems)
	}
	r.ledger = ledger(h, r.x.Counts)

	p := h.Printer
	r.t2t, r.t2o = p.totalT2T, p.totalT2O
	h.Strategy.t2t.final(r.t2t)
	r.clamped = h.Strategy.t2t.clamped() + r.x.Clamped
	if h.Exchange != nil {
		h.Exchange.t2o.final(r.t2o)
	} else if h.Remote != nil && h.Remote.t2o != nil {
		r.t2o.Merge(h.Remote.t2o)
	}
	if st := h.Strategy.stages; st != nil {
		for _, l := range st {
			hg := newHist()
			l.final(hg)
			r.stages = append(r.stages, hg)
			r.clamped += l.clamped()
		}
		if h.Remote != nil && h.Remote.t2oS != nil {
			r.stages[stageOrderAtExchange].Merge(h.Remote.t2oS)
		}
	}
	for _, mb := range h.Mail.all() {
		r.mail = append(r.mail, mb.Stats())
	}
	for _, rn := range h.Group.Runners() {
		r.threads = append(r.threads, rn.Stats())
	}

	lost := h.Feed.lost + h.Strategy.lost + h.Risk.lost + r.x.Lost
	if lost > 0 {
		r.problems = append(r.problems, fmt.Sprintf("%d messages lost to closed mailboxes", lost))
	}
	if bad := h.Strategy.undelivered() + h.Risk.undelivered() + h.Risk.c.Unknown() + r.x.Bad; bad > 0 {
		r.problems = append(r.problems, fmt.Sprintf("%d messages undecodable, unexpected or about unknown orders", bad))
	}
	if h.Strategy.badAudit > 0 {
		r.problems = append(r.problems, fmt.Sprintf("%d fill reports break the order's quantities (first: %s)", h.Strategy.badAudit, h.Strategy.auditErr))
	}
	if r.x.CheckErrs > 0 {
		r.problems = append(r.problems, fmt.Sprintf("book invariants violated in %d of %d checks (first: %s)", r.x.CheckErrs, r.x.Checks, r.x.CheckErr))
	} else if r.x.Checks == 0 {
		r.problems = append(r.problems, "the order books were never checked")
	}
	for _, st := range r.mail {
		if st.Torn+st.Corrupt+st.Discarded > 0 {
			r.problems = append(r.problems, fmt.Sprintf("mailbox %s dropped messages: torn %d corrupt %d discarded %d", st.Name, st.Torn, st.Corrupt, st.Discarded))
		}
	}
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
func (r *result) print(w io.Writer, cfg config, h handles) {
	mode := "in-process"
	switch {
	case cfg.NATS != "":
		mode = "nats (exchange in a second process, mailboxes bridged through NATS)"
	case cfg.IPC:
		mode = "ipc (exchange in a second process)"
	}
	var threads []string
	for _, st := range r.threads {
		threads = append(threads, fmt.Sprintf("%s(%s)", st.Role, cfg.idle[st.Role]))
	}
	fmt.Fprintf(w, "\nfinal: %s after %.2fs; feed ran %.2fs, drained in %v; %s; %d instruments, rate %d/s; threads %s\n",
		r.why, r.total.Seconds(), r.feedFor.Seconds(), r.drainedIn.Round(time.Millisecond), mode,
		cfg.Instruments, cfg.Rate, strings.Join(threads, " "))
	secs := r.feedFor.Seconds()
	row := func(stage, counter string, n int64, perSec bool) {
		rate := ""
		if perSec && secs > 0 {
			rate = fmt.Sprintf("%.0f", float64(n)/secs)
		}
		fmt.Fprintf(w, "%-9s %-24s %12d %10s\n", stage, counter, n, rate)
	}
	fmt.Fprintf(w, "%-9s %-24s %12s %10s\n", "stage", "counter", "count", "per-s")
	l := &r.ledger
	row("feed", "quotes", l.Feed.Quotes, true)
	s := l.Strategy
	row("strategy", "quotes-in", s.Quotes, true)
	row("strategy", "orders-out", s.Orders, true)
	row("strategy", "cancels-out", s.Cancels, true)
	row("strategy", "reports-in", s.Reports.Total(), true)
	row("strategy", "fills-in", s.Reports.Fills+s.Reports.PartialFills, true)
	row("strategy", "risk-rejects-in", s.RiskRejects, false)
	row("strategy", "filled-qty", s.FilledQty, false)
	row("strategy", "open", s.Open, false)
	k := l.Risk
	row("risk", "quotes-in", k.Quotes, true)
	row("risk", "orders-in", k.Orders, true)
	row("risk", "passed", k.Passed, true)
	row("risk", "rejected", k.Rejected, true)
	for reason, n := range k.RejectedBy {
		if n > 0 {
			row("risk", "rejected:"+msg.Reason(reason).String(), n, false)
		}
	}
	row("risk", "cancels", k.Cancels, false)
	row("risk", "reports-in", k.Reports.Total(), false)
	row("risk", "filled-qty", k.FilledQty, false)
	x := l.Exchange
	row("exchange", "quotes-in", x.Quotes, true)
	row("exchange", "orders-in", x.Orders, true)
	row("exchange", "cancels-in", x.Cancels, false)
	row("exchange", "reports-out", x.Reports.Total(), true)
	row("exchange", "acks", x.Reports.Acks, false)
	row("exchange", "partial-fills", x.Reports.PartialFills, false)
	row("exchange", "fills", x.Reports.Fills, false)
	row("exchange", "cancelled", x.Reports.Cancelled, false)
	row("exchange", "cancelled-on-request", x.CancelledByRequest, false)
	row("exchange", "rejected", x.Reports.Rejected, false)
	row("exchange", "cancel-rejects", x.Reports.CancelRejects, false)
	row("exchange", "open", x.Open, false)
	row("exchange", "filled-qty", x.FilledQty, false)
	row("exchange", "participant-orders", r.x.Liquidity.Orders, false)
	row("exchange", "book-checks", r.x.Checks, false)
	row("exchange", "book-check-failures", r.x.CheckErrs, false)

	fmt.Fprintf(w, "%-14s %10s %8s %8s %8s %8s %8s\n", "latency", "count", "p50", "p90", "p99", "p99.9", "max")
	hist := func(name string, hg *hdrhistogram.Histogram) {
		if hg.TotalCount() == 0 {
			fmt.Fprintf(w, "%-14s %10d %8s %8s %8s %8s %8s\n", name, 0, "-", "-", "-", "-", "-")
			return
		}
		fmt.Fprintf(w, "%-14s %10d %8s %8s %8s %8s %8s\n", name, hg.TotalCount(),
			fmtNanos(percentile(hg, 500)), fmtNanos(percentile(hg, 900)), fmtNanos(percentile(hg, 990)),
			fmtNanos(percentile(hg, 999)), fmtNanos(hg.Max()))
	}
	hist("tick-to-order", r.t2o)
	hist("tick-to-trade", r.t2t)
	fmt.Fprintln(w, "(tick-to-order: quote generated -> its order at the exchange; tick-to-trade: quote -> fill report back at the strategy)")
	r.printStages(w)
	if r.clamped > 0 {
		fmt.Fprintf(w, "(%d latencies outside 0..%v were recorded at the bound)\n", r.clamped, time.Duration(histMax))
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

// printStages prints where tick-to-order's time goes: for each point on an
// order's way, the p50 and p99 of the time from its quote's generation to
// that point, over the sampled quotes (stages), and the step from the
// previous point's p50. Steps of medians are not the medians of steps,
// but every point counts from the same reading of one clock, and a
// stage's own histogram would need a timestamp per hop in every message.
func (r *result) printStages(w io.Writer) {
	if len(r.stages) == 0 {
		return
	}
	fmt.Fprintf(w, "%-24s %10s %8s %8s %8s\n", "where tick-to-order goes", "count", "p50", "+p50", "p99")
	var prev int64
	for i, hg := range r.stages {
		if hg.TotalCount() == 0 {
			fmt.Fprintf(w, "%-24s %10d %8s %8s %8s\n", stageNames[i], 0, "-", "-", "-")
			continue
		}
		p50 := percentile(hg, 500)
		fmt.Fprintf(w, "%-24s %10d %8s %8s %8s\n", stageNames[i], hg.TotalCount(),
			fmtNanos(p50), fmtSignedNanos(p50-prev), fmtNanos(percentile(hg, 990)))
		prev = p50
	}
	fmt.Fprintf(w, "(one quote in %d, from its generation to each point on its order's way; +p50: the step from the point before)\n", stageSampleEvery)
}

// fmtSignedNanos is fmtNanos with a sign: a step between two medians can
// be negative.
func fmtSignedNanos(ns int64) string {
	if ns < 0 {
		return "-" + fmtNanos(-ns)
	}
	return "+" + fmtNanos(ns)
}
