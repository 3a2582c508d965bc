package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/internal/pad"
	"github.com/dutyrt/duty/internal/ticks"
)

const (
	stateNew     int32 = iota // not started, not closed
	stateStarted              // Start won: the agent's goroutine runs or ran
	stateClosed               // closed before it was started
)

// Runner runs one agent on its own goroutine locked to an OS thread. See
// the package documentation for the contract. A Runner is single use:
// Start at most once, Close any number of times from any goroutine.
type Runner struct {
	agent agent.Agent
	role  string
	cfg   config

	done   chan struct{} // closed when the agent has stopped and OnClose returned
	ctx    context.Context
	cancel context.CancelFunc

	state   atomic.Int32
	tid     atomic.Int64 // the agent's OS thread id once started
	closer  atomic.Int64 // the thread id of the goroutine closing a never-started agent
	exitErr error        // why the loop stopped; written before done is closed
	asked   atomic.Bool  // Close (or CloseContext) was called: see closeRequested

	// stop is read by the agent's thread every cycle and written by
	// closers: it lives alone on its cache line.
	_    pad.Line
	stop atomic.Bool
	_    pad.Line

	// Written only by the agent's thread.
	stats counters

	// live, if WithCounters was given: shared counters the loop keeps up
	// to date beside stats. Set by New, read-only afterwards.
	live *liveCounters

	// clock, if WithCachedClock was given: the cached clock the loop sets.
	// Used by the agent's thread only.
	clock *cachedClock

	// errLog is the default error handler's state, if no handler was
	// given; closed (its last summary written) before done is closed.
	errLog *errorLogger
}

// counters are written by the agent's thread only and read by anyone.
type counters struct {
	cycles    atomic.Int64
	work      atomic.Int64 // sum of positive work counts
	busy      atomic.Int64 // cycles with work; idle cycles = cycles - busy
	errors    atomic.Int64
	maxCycle  atomic.Int64 // ns
	idleState atomic.Int32
	_         pad.Line
}

// New returns a Runner for a. Options are applied in order.
func New(a agent.Agent, opts ...Option) (*Runner, error) {
	if a == nil {
		return nil, fmt.Errorf("%w: nil agent", ErrBadOption)
	}
	role := a.RoleName()
	cfg := config{stopOnPanic: true}
	for _, o := range opts {
		o(&cfg)
	}
	if err := errors.Join(cfg.errs...); err != nil {
		return nil, fmt.Errorf("agent %s: %w", role, err) // err: ErrBadOption's, which says "runner:"
	}
	cfg.errs = nil
	if cfg.idle == nil {
		cfg.idle = idle.Backoff()
	} else if err := claimIdle(cfg.idle, role); err != nil {
		return nil, err
	}
	var errLog *errorLogger
	if cfg.handler == nil {
		errLog = newErrorLogger(role)
		cfg.handler = errLog.handle
	}
	if cfg.threadName == "" {
		cfg.threadName = role
	}
	r := &Runner{agent: a, role: role, cfg: cfg, done: make(chan struct{}), errLog: errLog}
	if cfg.liveCounters != nil {
		live, err := allocateLive(cfg.liveCounters, role)
		if err != nil {
			releaseIdle(cfg.idle)
			return nil, err
		}
		r.live = live
	}
	if cfg.clock != nil {
		r.clock = &cachedClock{c: cfg.clock}
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	return r, nil
}

// RoleName returns the agent's role name.
func (r *Runner) RoleName() string { return r.role }

// threadID returns the Linux thread id of the agent's thread, or 0 before
// Start.
func (r *Runner) threadID() int { return int(r.tid.Load()) }

// Done is closed once the agent has stopped and its OnClose has returned,
// whatever stopped it (Close, a termination error, WithStopOnError or
// WithStopOnPanic).
func (r *Runner) Done() <-chan struct{} { return r.done }

// Err returns, once Done is closed, why the agent stopped by itself: an
// unexpected termination error, the error or *PanicError that stopped it
// (WithStopOnError, WithStopOnPanic), or an error wrapping ErrGoexit if a callback ended the
// agent's goroutine during the duty cycle. It is nil before Done is closed,
// when the stop was asked by Close (even if the agent then answers it with a
// termination error, such as agent.Terminate(ctx.Err()) on its cancelled
// context), after a failed Start (Start returns the failure), and after an
// expected termination (agent.ErrDone).
func (r *Runner) Err() error {
	select {
	case <-r.done:
		return r.exitErr
	default:
		return nil
	}
}

// Start starts the agent's goroutine, locks it to its OS thread, configures
// the thread (name, CPU affinity, timer slack), binds the agent's context
// if it is agent.ContextAware, and calls OnStart there. Start returns once
// OnStart has returned. If the thread setup or OnStart fails, the agent is
// closed (OnClose runs, its error goes to the handler) and Start returns the
// failure after OnClose has returned; a panic in BindContext or OnStart is
// such a failure, a *PanicError. If BindContext or OnStart ends the
// goroutine (runtime.Goexit, t.FailNow in a test agent), the same happens
// and Start returns an error wrapping ErrGoexit.
//
// Start fails with ErrAlreadyStarted on a second call and ErrClosed after
// Close.
func (r *Runner) Start() error {
	if !r.state.CompareAndSwap(stateNew, stateStarted) {
		if r.state.Load() == stateClosed {
			return fmt.Errorf("agent %s: %w", r.role, ErrClosed)
		}
		return fmt.Errorf("agent %s: %w", r.role, ErrAlreadyStarted)
	}
	ready := make(chan error, 1)
	go r.run(ready)
	var err error
	select {
	case err = <-ready:
	case <-r.done:
		// run answers ready on every path, a Goexit included; this is a
		// guard against a goroutine that ended without a word.
		select {
		case err = <-ready:
		default:
			err = fmt.Errorf("agent %s: %w", r.role, ErrGoexit)
		}
	}
	if err != nil {
		<-r.done
		return err
	}
	return nil
}

func (r *Runner) run(ready chan<- error) {
	// Deferred, so that they happen on every exit, runtime.Goexit in a
	// callback included; each step in a call of its own, so that a callback
	// exiting again in one of them does not skip the next: the exit is
	// reported, OnClose runs, the counters are freed, then Done is closed.
	var startErr error // why the start failed
	var answered, closing, returned bool
	defer close(r.done)
	defer r.closeErrLog() // after every other step: OnClose's error is handled first
	defer releaseIdle(r.cfg.idle)
	defer r.live.free()
	defer func() {
		if !returned && !closing {
			r.closeAgent()
		}
	}()
	defer func() {
		if !returned {
			r.goexited(ready, startErr, answered, closing)
		}
	}()
	// Never unlocked: when this goroutine exits the runtime ends the thread
	// rather than reuse one whose name, affinity and slack were changed.
	runtime.LockOSThread()
	r.tid.Store(int64(gettid()))
	if err := setupThread(&r.cfg); err != nil {
		startErr = fmt.Errorf("agent %s: thread setup: %w: %w", r.role, ErrBadOption, err)
	} else if ca, ok := r.agent.(agent.ContextAware); ok {
		if err := r.call(func() error { ca.BindContext(r.ctx); return nil }); err != nil {
			startErr = fmt.Errorf("runner: agent %s: BindContext: %w", r.role, err)
		}
	}
	if startErr == nil {
		if r.clock != nil {
			r.clock.anchor()
			r.clock.set(ticks.Now())
		}
		if err := r.call(r.agent.OnStart); err != nil {
			startErr = fmt.Errorf("runner: agent %s: OnStart: %w", r.role, err)
		}
	}
	if startErr != nil {
		closing = true
		r.closeAgent()
		answered = true
		ready <- startErr
		returned = true
		return
	}
	answered = true
	ready <- nil
	r.loop()
	closing = true
	r.closeAgent()
	returned = true
}

// goexited reports that a callback (BindContext, OnStart, DoWork, OnClose,
// the error handler) ended the agent's goroutine with runtime.Goexit:
// nothing else leaves run early, as call, doWork and report recover panics.
// answered: Start has had its answer (else startErr, if any, is it);
// closing: closeAgent was called. run's next deferred step runs OnClose if
// it has not run.
func (r *Runner) goexited(ready chan<- error, startErr error, answered, closing bool) {
	if !answered {
		if startErr == nil { // BindContext or OnStart exited
			startErr = fmt.Errorf("agent %s: %w", r.role, ErrGoexit)
		}
		ready <- startErr // Start returns it once OnClose has returned
	}
	switch {
	case closing:
		r.report(fmt.Errorf("runner: agent %s: while closing: %w", r.role, ErrGoexit))
	case answered:
		// In the duty cycle: the agent stopped by itself, unless a stop
		// had been asked.
		err := fmt.Errorf("agent %s: %w", r.role, ErrGoexit)
		if !r.stop.Load() {
			r.exitErr = err
		}
		r.report(err)
	}
}

func (r *Runner) loop() {
	s := r.cfg.idle
	sr, _ := s.(idle.StateReporter)
	timed := !r.cfg.noCycleTiming
	clk := r.clock
	tick := timed || clk != nil // a ticks reading per cycle
	st := &r.stats
	var maxTicks int64 // the longest cycle yet, in ticks; see noteCycle
	if !timed {
		maxTicks = math.MaxInt64 // no cycle is longer: the tracker never fires
	}
	cycles, work, busy := st.cycles.Load(), st.work.Load(), st.busy.Load()
	live := r.live
	lastState := idle.State(st.idleState.Load())
	var t0 int64
	if tick {
		t0 = ticks.Now()
	}
	for !r.stop.Load() {
		if clk != nil {
			clk.set(t0) // t0: the start of this cycle, see below
		}
		n, err := r.doWork()
		if err != nil {
			r.handle(err)
		}
		if tick {
			// One clock read per cycle: the cycle is timed from the end of
			// the previous idle step. After a cheap step (spin, nothing) the
			// previous reading stands in for it, so the figure includes that
			// short step. The clock is internal/ticks (an RDTSC where the
			// TSC is usable, cheaper than time.Since); ticks become
			// nanoseconds only for a new maximum, which is rare. The cached
			// clock (WithCachedClock) is set from the same readings.
			t1 := ticks.Now()
			if d := t1 - t0; d > maxTicks {
				maxTicks = d
				r.noteCycle(d)
			}
			t0 = t1
		}
		// Single writer: plain increments published with release stores
		// (a MOV on amd64) instead of locked adds. cycles is stored before
		// busy, and Stats loads busy first, so idle cycles never read
		// negative.
		cycles++
		atomicbuf.StoreRelease64(&st.cycles, cycles)
		if live != nil {
			atomicbuf.StoreRelease64(live.cycles, cycles)
		}
		if n > 0 {
			work += int64(n)
			busy++
			atomicbuf.StoreRelease64(&st.work, work)
			atomicbuf.StoreRelease64(&st.busy, busy)
			if live != nil {
				atomicbuf.StoreRelease64(live.work, work)
			}
		} else if live != nil {
			atomicbuf.StoreRelease64(live.idle, cycles-busy)
		}
		// Unlike Agrona, a failing cycle idles too: an agent that fails
		// on every cycle must not spin at full speed through the handler.
		s.Idle(n)
		is := idle.StateParking // unknown strategies: assume the step was slow
		if sr != nil {
			is = sr.State()
			if is != lastState {
				lastState = is
				st.idleState.Store(int32(is))
			}
		}
		if tick && (is == idle.StateYielding || is == idle.StateParking) {
			t0 = ticks.Now()
		}
	}
}

// noteCycle publishes a duty cycle of d ticks, the longest this loop has
// seen, as Stats.MaxCycle (and the live counter) if it is longer in
// nanoseconds than the figure there: the conversion's rate can be refined
// between two calls (internal/ticks), and MaxCycle never goes down.
func (r *Runner) noteCycle(d int64) {
	ns := ticks.Nanos(d)
	if ns <= r.stats.maxCycle.Load() {
		return
	}
	r.stats.maxCycle.Store(ns) // single writer: the runner's goroutine
	if r.live != nil {
		atomicbuf.StoreRelease64(r.live.maxCycle, ns)
	}
}

// doWork calls DoWork, turning a panic into a *PanicError.
func (r *Runner) doWork() (n int, err error) {
	defer func() {
		if v := recover(); v != nil {
			n, err = 0, &PanicError{Role: r.role, Value: v, Stack: debug.Stack()}
		}
	}()
	return r.agent.DoWork()
}

// call calls a lifecycle callback, turning a panic into a *PanicError.
func (r *Runner) call(f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Role: r.role, Value: v, Stack: debug.Stack()}
		}
	}()
	return f()
}

func (r *Runner) handle(err error) {
	// A panic is never a request to stop, nor the answer to one, whatever
	// its value wraps: WithStopOnPanic decides.
	_, panicked := err.(*PanicError)
	if term, expected := agent.IsTermination(err); term && !panicked {
		stopping := r.stop.Load()
		r.stop.Store(true)
		switch {
		case expected:
		case stopping:
			// The stop was asked (Close) before the agent asked for it:
			// not why it stopped, so not Err. A termination caused by the
			// cancelled context is the answer to that stop, not an error.
			if !errors.Is(err, context.Canceled) {
				r.report(err)
			}
		default:
			r.exitErr = err
			r.report(err)
		}
		return
	}
	stopping := r.stop.Load()
	if stopping && !panicked && errors.Is(err, context.Canceled) {
		return // the agent saw its context end: the stop it was asked for
	}
	if !stopping {
		r.stats.errors.Add(1)
		if r.live != nil {
			r.live.errors.Add(1)
		}
	}
	stop := r.cfg.stopOnError
	if panicked {
		stop = r.cfg.stopOnPanic
	}
	if stop && !stopping {
		r.exitErr = err
		r.stop.Store(true)
	}
	r.report(err)
}

// report calls the handler; a panicking handler is logged, not fatal.
func (r *Runner) report(err error) {
	defer func() {
		if v := recover(); v != nil {
			slog.Default().Error("duty: error handler panicked", "role", r.role, "panic", v, "err", err)
		}
	}()
	r.cfg.handler(err)
}

// closeErrLog writes the default handler's last summary; nil-safe.
func (r *Runner) closeErrLog() {
	if r.errLog != nil {
		r.errLog.close()
	}
}

// closeAgent ends the agent's context, however the agent stopped (as Close
// and the Invoker do), then calls OnClose.
func (r *Runner) closeAgent() {
	r.cancel()
	if err := r.call(r.agent.OnClose); err != nil {
		r.report(fmt.Errorf("runner: agent %s: OnClose: %w", r.role, err))
	}
}

// Close stops the agent and waits for it, up to 5 s; CloseContext waits as
// long as its context allows.
func (r *Runner) Close() error {
	if r.onAgentThread() {
		r.requestStop()
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	err := r.CloseContext(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("runner: agent %s did not stop within %v: %w", r.role, closeTimeout, context.DeadlineExceeded)
	}
	return err
}

// CloseContext stops the agent: it sets the stop flag (seen by the duty
// cycle before its next DoWork) and cancels the agent's context. Then:
//
//   - never started: OnClose runs on the calling goroutine, and a later
//     Start fails with ErrClosed; meanwhile that goroutine counts as the
//     agent's thread (Linux), so a Close from OnClose or from the error
//     handler there returns nil at once;
//   - called on the agent's own thread (from a callback or from the error
//     handler): returns nil at once; the agent stops when the callback
//     returns;
//   - the agent has already stopped: returns nil, whatever ctx;
//   - otherwise waits until the agent has stopped and OnClose has returned,
//     or ctx ends, which gives an error wrapping ctx's error
//     (context.DeadlineExceeded or context.Canceled), naming the agent.
//
// Safe to call any number of times, concurrently, from any goroutine; every
// call from another goroutine waits. OnClose's own error goes to the error
// handler, not to Close.
func (r *Runner) CloseContext(ctx context.Context) error {
	r.requestStop()
	if r.state.CompareAndSwap(stateNew, stateClosed) {
		r.closeOnCaller()
		return nil
	}
	if r.onAgentThread() {
		return nil
	}
	select {
	case <-r.done: // stopped: never a timeout, even if ctx has ended
		return nil
	default:
	}
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("runner: agent %s did not stop: %w", r.role, ctx.Err())
	}
}

// closeOnCaller closes a never-started agent on the calling goroutine. That
// goroutine is locked to its thread meanwhile and the thread's id kept in
// closer, so that a Close from OnClose or from the error handler, which run
// here, is seen as coming from the agent's own thread (onAgentThread) and
// does not wait for done, closed only when OnClose and the handler have
// returned. The deferred steps also run if a callback calls runtime.Goexit.
func (r *Runner) closeOnCaller() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread() // nests: a caller's own lock stays
	r.closer.Store(int64(gettid()))
	defer close(r.done)
	defer r.closeErrLog()
	defer releaseIdle(r.cfg.idle)
	defer r.live.free()
	r.closeAgent()
}

func (r *Runner) requestStop() {
	r.asked.Store(true)
	r.stop.Store(true)
	r.cancel()
	// An idle strategy that sleeps until it is woken (mailbox.NewWakeIdle)
	// is woken, so that the duty loop sees stop at once rather than at the
	// end of its sleep. Wake is safe from any goroutine.
	if w, ok := r.cfg.idle.(interface{ Wake() }); ok {
		w.Wake()
	}
}

// closeRequested reports whether Close or CloseContext was called, as
// opposed to the agent stopping by itself (stop is set in both cases).
// Set before stop, so a watcher woken by Done sees it if it was the
// reason.
func (r *Runner) closeRequested() bool { return r.asked.Load() }

// onAgentThread reports whether the caller runs on the agent's thread, or
// on the goroutine closing the never-started agent (closeOnCaller). A
// locked thread runs only its own goroutine, so the thread id identifies
// that goroutine while the agent has not stopped. Off Linux gettid is -1
// and nothing is detected.
func (r *Runner) onAgentThread() bool {
	select {
	case <-r.done:
		return false
	default:
	}
	self := int64(gettid())
	return self > 0 && (self == r.tid.Load() || self == r.closer.Load())
}

// Stats is a snapshot of a runner's statistics.
type Stats struct {
	Role       string
	DutyCycles int64         // completed duty cycles
	TotalWork  int64         // sum of positive work counts
	IdleCycles int64         // cycles with a work count <= 0
	Errors     int64         // counted errors (see WithErrorHandler)
	MaxCycle   time.Duration // longest duty cycle, the stall tracker (see WithCycleTiming)
	IdleState  idle.State    // the idle strategy's state after the last cycle
	Running    bool          // started and not yet stopped
}

// Stats returns a snapshot of the statistics. Safe from any goroutine,
// lock-free; each field is read atomically, so fields of a running agent
// may be a cycle apart from each other. The counters are final once Done is
// closed.
func (r *Runner) Stats() Stats {
	st := &r.stats
	busy := st.busy.Load() // before cycles: idle cycles never read negative
	cycles := st.cycles.Load()
	running := r.state.Load() == stateStarted
	if running {
		select {
		case <-r.done:
			running = false
		default:
		}
	}
	return Stats{
		Role:       r.role,
		DutyCycles: cycles,
		TotalWork:  st.work.Load(),
		IdleCycles: cycles - busy,
		Errors:     st.errors.Load(),
		MaxCycle:   time.Duration(st.maxCycle.Load()),
		IdleState:  idle.State(st.idleState.Load()),
		Running:    running,
	}
}
