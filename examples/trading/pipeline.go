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

	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/dutyfx"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/runner"
)

// monoNanos is the clock of every timestamp: the host's monotonic clock,
// the same in every process (time.Now's is relative to the process's
// start).
func monoNanos() int64 { return clock.Host.Nanos() }

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
	// exchangePending is the exchange's pending-output word (quiesce).
	exchangePending *atomic.Int64
}

func (m *mailboxes) all() (out []*mailbox.Mailbox) {
	for _, b := range []*mailbox.Mailbox{m.strategyIn, m.strategyResp, m.riskIn, m.riskResp, m.exchangeIn} {
		if b != nil {
			out = append(out, b)
		}
	}
	return out
}

// newLocalMailboxes makes the in-process mailboxes, which publish their
// statistics into ctrs.
func newLocalMailboxes(cfg config, ctrs *counters.Manager) (*mailboxes, error) {
	var m mailboxes
	var errs []error
	for _, p := range []struct {
		name string
		mb   **mailbox.Mailbox
	}{{"strategy.in", &m.strategyIn}, {"strategy.resp", &m.strategyResp}, {"risk.in", &m.riskIn}, {"risk.resp", &m.riskResp}, {"exchange.in", &m.exchangeIn}} {
		var err error
		*p.mb, err = mailbox.New(mailbox.Config{Name: p.name, Capacity: cfg.Capacity, Counters: ctrs})
		errs = append(errs, err)
	}
	return &m, errors.Join(errs...)
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
	Remote   *remoteExchange `optional:"true"` // -ipc only
}

// agentsModule provides and runs the agents of this process.
func agentsModule(exchange bool) fx.Option {
	opts := []fx.Option{fx.Provide(newFeedAgent, newStrategyAgent, newRiskAgent),
		dutyfx.Include[*feedAgent](), dutyfx.Include[*strategyAgent](), dutyfx.Include[*riskAgent]()}
	if exchange {
		opts = append(opts, fx.Provide(newExchangeAgent), dutyfx.Include[*exchangeAgent]())
	}
	return fx.Options(opts...)
}

// runnerConfig is dutyfx.Runners's configuration: idle strategy and CPUs
// per thread, the exchange started first and stopped last, every agent
// error recorded in errs and logged.
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
	rc.Threads = map[string][]string{}
	for _, process := range []string{"demo", roleExchange} {
		rc.Idle[keeperRole(process)] = keeperIdle
	}
	for _, t := range slices.Backward(ts) {
		rc.Threads[t.role] = t.agents
		rc.Order = append(rc.Order, t.role)
		rc.Idle[t.role] = cfg.idle[t.role]
		if t.role == natsThread {
			rc.Idle[t.role] = natsIdle
		}
		if cpus, ok := cfg.cpus[t.role]; ok {
			rc.CPUs[t.role] = cpus
		}
	}
	return rc
}

func fxLogger(cfg config) fx.Option {
	if cfg.Verbose {
		return fx.Options()
	}
	return fx.NopLogger
}

// run runs the demo: the pipeline for cfg.Duration (or until ctx ends),
// the drain, the final table and the reconciliation line. ok reports
// whether everything reconciled; err is a failure to run at all.
func run(ctx context.Context, cfg config, stdout, stderr io.Writer) (ok bool, err error) {
	if cfg.Role == roleExchange {
		return runExchangeProcess(ctx, cfg, stdout, stderr)
	}
	if cfg.Replay != "" {
		return runReplay(cfg, stdout)
	}
	if cfg.Record != "" { // before the exchange process records into it
		if err := checkRecordDir(cfg.Record, recRoles[:]...); err != nil {
			return false, err
		}
	}
	stderr = lockedWriter(stderr)
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	files, err := openFiles(cfg.Dir, "demo")
	if err != nil {
		return false, err
	}
	defer func() {
		if cerr := files.close(); cerr != nil && err == nil {
			fmt.Fprintln(stderr, "trading:", cerr)
		}
	}()
	ts := threadLayout(cfg.Threads, !cfg.IPC)
	var h handles
	opts := []fx.Option{
		fxLogger(cfg),
		agentsModule(!cfg.IPC),
		dutyfx.Runners, files.keeperModule(),
		printerModule(stdout),
		fx.Populate(&h),
	}
	var remote *remoteExchange
	if cfg.IPC {
		if remote, err = startRemote(cfg, files, stderr); err != nil {
			return false, err
		}
		defer func() {
			if cerr := remote.close(); cerr != nil && err == nil {
				fmt.Fprintln(stderr, "trading:", cerr)
			}
		}()
		opts = append(opts, fx.Supply(remote, remote.mbs))
		if remote.nats != nil {
			opts = append(opts, remote.natsModule)
			ts = append(ts, remote.natsThread)
		}
	} else {
		opts = append(opts, fx.Provide(func() (*mailboxes, error) { return newLocalMailboxes(cfg, files.ctr.Manager()) }),
			fx.Supply(exchangeWords(newWords(1+numExchPub))))
	}
	opts = append(opts, fx.Supply(cfg, clockFunc(monoNanos), logger, files.lat,
		runnerConfig(cfg, ts, logger, files.errs, runner.WithCounters(files.ctr.Manager()))))
	files.announce(stdout)
	md, err := startMD(cfg, stderr)
	if err != nil {
		return false, err
	}
	defer md.close()
	app := fx.New(append(opts, md.module())...)
	rec, err := startApp(app, cfg, h) // -record's, nil otherwise
	if err != nil {
		return false, err
	}
	defer rec.closeAll()
	started := time.Now()

	var res result
	timer := time.NewTimer(cfg.Duration)
	defer timer.Stop()
	for res.why == "" {
		select {
		case <-ctx.Done():
			res.why = "interrupted"
		case <-timer.C:
			res.why = "duration reached"
		case sig := <-app.Wait():
			if res.why = "interrupted"; sig.Signal == nil { // fx watches SIGINT and SIGTERM too
				// dutyfx.Runners's shutdown: an agent stopped by itself.
				res.why = "stopped early: " + sig.String()
				res.problems = append(res.problems, "the pipeline stopped before the end ("+sig.String()+")")
			}
		case <-remote.done():
			res.why = "exchange process ended"
		}
	}

	// Stop the feed, let the pipeline drain, then stop the agents.
	res.feedFor = time.Since(started)
	h.Feed.stop.Store(true)
	if !quiesce(h, cfg.Drain) {
		res.problems = append(res.problems, fmt.Sprintf("the pipeline did not drain within %v", cfg.Drain))
	}
	res.drainedIn = time.Since(started) - res.feedFor
	if remote != nil {
		remote.finish(cfg.Drain)
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := app.Stop(stopCtx); err != nil {
		res.problems = append(res.problems, "stopping: "+err.Error())
	}
	for _, r := range h.Group.Runners() {
		if err := r.Err(); err != nil {
			res.problems = append(res.problems, fmt.Sprintf("agent %s failed: %v", r.RoleName(), err))
		}
	}
	res.total = time.Since(started)
	// The runners have stopped: the agents' fields are safe to read.
	res.collect(h)
	res.problems = append(res.problems, rec.finish(stdout, cfg, &res)...)
	if res.errors, err = files.errs.observations(); err != nil {
		res.problems = append(res.problems, "reading the error log: "+err.Error())
	}
	if remote != nil && remote.sum != nil {
		res.errors = append(res.errors, remote.sum.AgentErrors...)
	}
	res.problems = append(res.problems, md.finish(stdout)...)
	res.print(stdout, cfg)
	return res.ok(), nil
}

// startApp starts app, whose agents are h's, once -record's journals are
// open (nil when not recording) and, with -nats, the exchange process
// answers.
func startApp(app *fx.App, cfg config, h handles) (*recorder, error) {
	if err := app.Err(); err != nil {
		return nil, err
	}
	rec, err := startRecording(cfg, h)
	if err != nil {
		return nil, err
	}
	if err := h.Remote.connectNATS(); err != nil {
		return nil, errors.Join(err, rec.closeAll())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		return nil, errors.Join(err, rec.closeAll())
	}
	return rec, nil
}

// quiesce waits, up to limit, until the feed has stopped, every mailbox
// is empty and no agent holds pending output, and reports whether that
// happened: two samples a few ms apart with equal delivered counts (they
// only grow) mean nothing was sent between them. A sample reads the
// mailboxes before the pending words, which a handler stores before the
// mailbox releases its message.
func quiesce(h handles, limit time.Duration) bool {
	pend := []*atomic.Int64{h.Feed.out.word, h.Strategy.out.word, h.Risk.out.word, h.Mail.exchangePending}
	take := func() (pos []int64, quiet bool) {
		quiet = h.Feed.stopped.Load() == 1
		for _, mb := range h.Mail.all() {
			st := mb.Stats()
			pos = append(pos, st.Delivered)
			quiet = quiet && st.Depth == 0
		}
		for _, w := range pend {
			quiet = quiet && (w == nil || w.Load() == 0)
		}
		return pos, quiet
	}
	deadline := time.Now().Add(limit)
	prev, prevQuiet := take()
	for {
		time.Sleep(5 * time.Millisecond)
		cur, quiet := take()
		if prevQuiet && quiet && slices.Equal(prev, cur) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		prev, prevQuiet = cur, quiet
	}
}

// lockedWriter returns w if it is a file, else w behind a mutex: the
// children write to it from os/exec's goroutines.
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
