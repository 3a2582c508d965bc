package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/fx"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/dutyfx"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/runner"
)

// monoNanos is the clock of every timestamp: the host's monotonic clock
// (clock.Host). Go's time.Now carries a monotonic reading too, but
// relative to the process's start, so two processes could not compare
// them; the host's clock is one for every process, which the -ipc
// exchange process needs for tick-to-order.
func monoNanos() int64 { return clock.Host.Nanos() }

// quietLogger discards what it is given: the recording's journals report
// nothing the demo prints.
var quietLogger = slog.New(slog.DiscardHandler)

// clockFunc is the clock the fx graph hands to the agents.
type clockFunc func() int64

// mailboxes are the pipeline's mailboxes, named after their receiver.
type mailboxes struct {
	strategyIn   *mailbox.Mailbox // quotes
	strategyResp *mailbox.Mailbox // execution reports, risk rejects
	riskIn       *mailbox.Mailbox // quotes, orders, cancels
	riskResp     *mailbox.Mailbox // execution reports
	exchangeIn   *mailbox.Mailbox // quotes, orders, cancels (passed risk)
	// exchangePending is the exchange's pending-output word, read by
	// quiesce (in -ipc mode it lives in the exchange process's counters
	// file).
	exchangePending *atomic.Int64
}

func (m *mailboxes) all() []*mailbox.Mailbox {
	var out []*mailbox.Mailbox
	for _, b := range []*mailbox.Mailbox{m.strategyIn, m.strategyResp, m.riskIn, m.riskResp, m.exchangeIn} {
		if b != nil {
			out = append(out, b)
		}
	}
	return out
}

// newLocalMailboxes makes the in-process mailboxes: each owns a ring on
// the heap and publishes its statistics into ctrs.
func newLocalMailboxes(cfg config, ctrs *counters.Manager) (*mailboxes, error) {
	mk := func(name string) (*mailbox.Mailbox, error) {
		return mailbox.New(mailbox.Config{Name: name, Capacity: cfg.Capacity, Counters: ctrs})
	}
	var m mailboxes
	var errs [5]error
	m.strategyIn, errs[0] = mk("strategy.in")
	m.strategyResp, errs[1] = mk("strategy.resp")
	m.riskIn, errs[2] = mk("risk.in")
	m.riskResp, errs[3] = mk("risk.resp")
	m.exchangeIn, errs[4] = mk("exchange.in")
	return &m, errors.Join(errs[:]...)
}

// handles are what run needs from the fx graph once it has started.
type handles struct {
	fx.In
	Feed     *feedAgent
	Strategy *strategyAgent
	Risk     *riskAgent
	Exchange *exchangeAgent `optional:"true"` // nil with -ipc
	Mail     *mailboxes
	Group    *runner.Group
	Printer  *printer
	Remote   *remoteExchange `optional:"true"` // -ipc only
}

// stageAgents are the agents, by role, for the threads module: those of
// this process.
type stageAgents struct {
	fx.In
	Feed     *feedAgent     `optional:"true"`
	Strategy *strategyAgent `optional:"true"`
	Risk     *riskAgent     `optional:"true"`
	Exchange *exchangeAgent `optional:"true"`
	MD       *mdAgent       `optional:"true"` // -md: in the feed agent's place
}

func (s stageAgents) byRole(role string) agent.Agent {
	// A nil pointer must not become a non-nil interface.
	switch {
	case role == roleFeed && s.MD != nil:
		return s.MD
	case role == roleFeed && s.Feed != nil:
		return s.Feed
	case role == roleStrategy && s.Strategy != nil:
		return s.Strategy
	case role == roleRisk && s.Risk != nil:
		return s.Risk
	case role == roleExchange && s.Exchange != nil:
		return s.Exchange
	}
	return nil
}

// namedComposite is an agent.NewComposite with a short role name (the
// thread's name: "trader" rather than "[feed,strategy,risk]").
type namedComposite struct {
	agent.Agent
	role string
}

func (n namedComposite) RoleName() string { return n.role }

// Agents are the composite's members (what dutyfx's "wake" idle strategy
// sleeps for).
func (n namedComposite) Agents() []agent.Agent {
	if c, ok := n.Agent.(interface{ Agents() []agent.Agent }); ok {
		return c.Agents()
	}
	return nil
}

// BindContext passes ctx on to the members (agent.ContextAware).
func (n namedComposite) BindContext(ctx context.Context) {
	if c, ok := n.Agent.(agent.ContextAware); ok {
		c.BindContext(ctx)
	}
}

// The fx modules: one per agent role, the mailboxes, the threads that
// group the agents for dutyfx.Runners, and the printer.

func feedModule() fx.Option {
	return fx.Module(roleFeed, fx.Provide(func(cfg config, clock clockFunc, mbs *mailboxes) (*feedAgent, error) {
		return newFeedAgent(cfg, clock, mbs, newWords(4))
	}))
}

func strategyModule() fx.Option {
	return fx.Module(roleStrategy, fx.Provide(func(cfg config, clock clockFunc, mbs *mailboxes, l latencies) (*strategyAgent, error) {
		a, err := newStrategyAgent(cfg, clock, mbs, newWords(1+numStratPub), l.t2t)
		if a != nil {
			a.stages = l.stages
		}
		return a, err
	}))
}

func riskModule() fx.Option {
	return fx.Module(roleRisk, fx.Provide(func(cfg config, clock clockFunc, mbs *mailboxes, l latencies) (*riskAgent, error) {
		a, err := newRiskAgent(cfg, clock, mbs, newWords(1+numRiskPub))
		if a != nil {
			a.stages = l.stages
		}
		return a, err
	}))
}

func exchangeModule() fx.Option {
	return fx.Module(roleExchange, fx.Provide(func(cfg config, clock clockFunc, mbs *mailboxes, w exchangeWords, l latencies) (*exchangeAgent, error) {
		mbs.exchangePending = w[0]
		a, err := newExchangeAgent(cfg, clock, mbs, words(w), l.t2o)
		if a != nil {
			a.stages = l.stages
		}
		return a, err
	}))
}

// threadsModule provides one agent per thread into dutyfx.Runners's group:
// an agent alone, or a composite of the agents sharing the thread.
func threadsModule(ts []thread) fx.Option {
	var opts []fx.Option
	for _, t := range ts {
		opts = append(opts, fx.Provide(dutyfx.AsAgent(func(s stageAgents) (agent.Agent, error) {
			var members []agent.Agent
			for _, role := range t.agents {
				a := s.byRole(role)
				if a == nil {
					return nil, fmt.Errorf("trading: no %s agent in this process", role)
				}
				members = append(members, a)
			}
			if len(members) == 1 {
				return members[0], nil
			}
			c, err := agent.NewComposite(members...)
			if err != nil {
				return nil, err
			}
			return namedComposite{c, t.role}, nil
		})))
	}
	return fx.Module("threads", opts...)
}

// runnerConfig is dutyfx.Runners's configuration: idle strategy and CPUs
// per thread, start order, and an application shutdown if an agent stops
// by itself.
//
// Every agent error is recorded in errs (once per distinct error, with a
// count) and logged.
func runnerConfig(cfg config, ts []thread, logger *slog.Logger, errs *agentErrors, extra ...runner.Option) dutyfx.Config {
	rc := dutyfx.Config{
		Idle: map[string]string{},
		CPUs: map[string][]int{},
		Options: func(role string) []runner.Option {
			return append([]runner.Option{runner.WithErrorHandler(func(err error) {
				if !errs.log.Record(err) {
					logger.Warn("the error log is full", "role", role)
				}
				logger.Error("agent error", "role", role, "err", err)
			})}, extra...)
		},
	}
	// The exchange starts first so that it is ready for the first quote,
	// and stops last.
	for _, t := range slices.Backward(ts) {
		rc.Order = append(rc.Order, t.role)
		rc.Idle[t.role] = cfg.idle[t.role]
		if cpus, ok := cfg.cpus[t.role]; ok {
			rc.CPUs[t.role] = cpus
		}
	}
	return rc
}

func fxLogger(cfg config, stderr io.Writer) fx.Option {
	if cfg.Verbose {
		return fx.Options()
	}
	return fx.NopLogger
}

// run runs the demo: the pipeline for cfg.Duration (or until ctx ends),
// then the drain, the final table and the reconciliation line, last. ok
// reports whether everything reconciled; err is a failure to run at all.
func run(ctx context.Context, cfg config, stdout, stderr io.Writer) (ok bool, err error) {
	if cfg.Role == roleExchange {
		return runExchangeProcess(ctx, cfg, stdout, stderr)
	}
	if cfg.Replay != "" {
		return runReplay(cfg, stdout)
	}
	// The exchange and feeder processes write to stderr too: through a
	// goroutine of os/exec's when it is not a file, beside this process's
	// own writes. One lock keeps them apart.
	stderr = lockedWriter(stderr)
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	ts := threadLayout(cfg.Threads, !cfg.IPC)
	var h handles
	opts := []fx.Option{
		fxLogger(cfg, stderr),
		fx.Supply(cfg, clockFunc(monoNanos), logger),
		feedModule(), strategyModule(), riskModule(),
		threadsModule(ts),
		dutyfx.Runners,
		printerModule(stdout),
		fx.Populate(&h),
	}
	var remote *remoteExchange
	var errs *agentErrors
	var stats *statsFiles
	if cfg.Record != "" {
		// Before the exchange process starts: it records into the same
		// directory.
		if err := checkRecordDir(cfg.Record); err != nil {
			return false, err
		}
	}
	if cfg.IPC {
		// The shared files and the exchange process live outside the fx
		// graph, so that they are released on every path (close waits for
		// the child or kills it).
		if remote, err = startRemote(cfg, stderr); err != nil {
			return false, err
		}
		defer func() {
			if cerr := remote.close(); cerr != nil && err == nil {
				fmt.Fprintln(stderr, "trading:", cerr)
			}
		}()
		opts = append(opts, fx.Supply(remote, remote.mbs))
		errs = fileErrors(remote.errs)
	} else {
		if errs, err = newHeapErrors(); err != nil {
			return false, err
		}
		opts = append(opts, exchangeModule(),
			fx.Provide(func() (*mailboxes, error) { return newLocalMailboxes(cfg, stats.manager()) }),
			fx.Provide(func() exchangeWords { return exchangeWords(newWords(1 + numExchPub)) }))
	}
	// The counters file every mailbox and runner publishes into, closed
	// after the app has stopped (deferred after remote's close: runs first).
	if stats, err = openStats(cfg, remote); err != nil {
		return false, err
	}
	defer func() {
		if cerr := stats.close(); cerr != nil && err == nil {
			fmt.Fprintln(stderr, "trading:", cerr)
		}
	}()
	stats.announce(stdout)
	md, err := startMD(cfg, stderr) // -md: the feeder and the SUB socket (md.go)
	if err != nil {
		return false, err
	}
	defer md.close()
	opts = append(opts, md.module())
	opts = append(opts, fx.Supply(runnerConfig(cfg, ts, logger, errs, stats.runnerOption()), stats.lat))
	app := fx.New(opts...)
	rec, err := startApp(app, cfg, h) // rec: -record's, nil otherwise
	if err != nil {
		return false, err
	}
	defer rec.closeAll()
	started := time.Now()

	var res result
	timer := time.NewTimer(cfg.Duration)
	heartbeat := time.NewTicker(time.Second)
	defer heartbeat.Stop()
	for {
		select {
		case <-heartbeat.C:
			remote.heartbeat()
			stats.heartbeat()
			continue
		case <-ctx.Done():
			res.why = "interrupted"
		case <-timer.C:
			res.why = "duration reached"
		case sig := <-app.Wait():
			if sig.Signal != nil {
				// fx watches SIGINT and SIGTERM too; either of us may see it.
				res.why = "interrupted"
				break
			}
			// dutyfx.Runners's shutdown: an agent stopped by itself.
			res.why = "stopped early: " + sig.String()
			res.problems = append(res.problems, "the pipeline stopped before the end ("+sig.String()+")")
		case <-remote.done():
			res.why = "exchange process ended"
		}
		break
	}
	timer.Stop()

	// Stop the feed, let the pipeline drain, then stop the agents.
	res.feedFor = time.Since(started)
	h.Feed.stop.Store(true)
	drainStart := time.Now()
	if !quiesce(h, cfg.Drain) {
		res.problems = append(res.problems, fmt.Sprintf("the pipeline did not drain within %v", cfg.Drain))
	}
	res.drainedIn = time.Since(drainStart)
	if remote != nil {
		remote.finish(cfg.Drain)
	}
	stopCtx, cancel2 := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel2()
	if err := app.Stop(stopCtx); err != nil {
		res.problems = append(res.problems, "stopping: "+err.Error())
	}
	for _, r := range h.Group.Runners() {
		if err := r.Err(); err != nil {
			res.problems = append(res.problems, fmt.Sprintf("agent %s failed: %v", r.RoleName(), err))
		}
	}
	res.total = time.Since(started)
	// The runners have stopped (app.Stop waited for every Done): the
	// agents' plain fields are safe to read here.
	res.collect(h)
	res.problems = append(res.problems, rec.finish(stdout, cfg, &res)...)
	if res.errors, err = errs.observations(); err != nil {
		res.problems = append(res.problems, "reading the error log: "+err.Error())
	}
	res.errors = append(res.errors, remote.agentErrors()...)
	res.problems = append(res.problems, md.finish(stdout)...)
	res.print(stdout, cfg)
	return res.ok(), nil
}

// startApp starts app, whose agents are h's, once -record's journals
// (nil when not recording) are in place.
func startApp(app *fx.App, cfg config, h handles) (*recorder, error) {
	if err := app.Err(); err != nil {
		return nil, err
	}
	rec, err := startRecording(cfg, h)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		return nil, errors.Join(err, rec.closeAll())
	}
	return rec, nil
}

// quiesce waits, up to limit, until the feed has stopped and every
// mailbox is empty with no agent holding pending output, and reports
// whether that happened. It compares two samples a few milliseconds apart:
// delivered counts only grow, so equal counts of empty mailboxes mean
// nothing was sent between the samples (a message sent and delivered
// meanwhile moves the count), and no pending output then means nothing is
// in flight. Within a sample, the mailboxes are read before the pending
// words: a handler stores its pending word before the mailbox releases
// its message.
func quiesce(h handles, limit time.Duration) bool {
	mbs := h.Mail.all()
	pend := []*atomic.Int64{h.Feed.out.word, h.Strategy.out.word, h.Risk.out.word, h.Mail.exchangePending}
	type sample struct {
		pos   []int64
		quiet bool
	}
	take := func() sample {
		s := sample{quiet: h.Feed.stopped.Load() == 1}
		for _, mb := range mbs {
			st := mb.Stats()
			s.pos = append(s.pos, st.Delivered)
			if st.Depth != 0 {
				s.quiet = false
			}
		}
		for _, w := range pend {
			if w != nil && w.Load() != 0 {
				s.quiet = false
			}
		}
		return s
	}
	deadline := time.Now().Add(limit)
	prev := take()
	for {
		time.Sleep(5 * time.Millisecond)
		cur := take()
		if prev.quiet && cur.quiet && slices.Equal(prev.pos, cur.pos) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		prev = cur
	}
}

// lockedWriter returns w itself if it is a file (the child processes
// write to its descriptor, no goroutine of ours involved), else w behind
// a mutex.
func lockedWriter(w io.Writer) io.Writer {
	if _, ok := w.(*os.File); ok {
		return w
	}
	return &syncWriter{w: w}
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
