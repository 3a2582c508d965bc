package runner

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/idle"
)

func TestCloseBeforeStartRunsOnCloseOnCallerAndForbidsStart(t *testing.T) {
	a := &fakeAgent{role: "early"}
	r, err := New(a)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	require.Equal(t, []string{"close"}, a.Events(), "OnClose without OnStart")
	require.ErrorIs(t, r.Start(), ErrClosed)
	require.NoError(t, r.Close())
	require.Equal(t, int32(1), a.closes.Load())
	require.Zero(t, a.cycles.Load())
	waitDone(t, r)
	require.False(t, r.Stats().Running)
}

func TestStartTwiceFails(t *testing.T) {
	r, err := New(&fakeAgent{role: "twice"}, WithIdle(idle.Sleeping(time.Microsecond)))
	require.NoError(t, err)
	require.NoError(t, r.Start())
	require.ErrorIs(t, r.Start(), ErrAlreadyStarted)
	require.NoError(t, r.Close())
}

func TestDoubleCloseCallsOnCloseOnce(t *testing.T) {
	a := &fakeAgent{role: "double"}
	r, err := New(a, WithIdle(idle.Sleeping(time.Microsecond)))
	require.NoError(t, err)
	require.NoError(t, r.Start())
	waitFor(t, func() bool { return a.cycles.Load() > 3 })
	require.NoError(t, r.Close())
	require.NoError(t, r.Close())
	require.Equal(t, []string{"start", "close"}, a.Events())
	require.Nil(t, r.Err())
}

func TestConcurrentCloseAllWaitForTheAgent(t *testing.T) {
	a := &fakeAgent{role: "concurrent"}
	a.close = func() error { time.Sleep(20 * time.Millisecond); return nil } // widen the window
	r, err := New(a, WithIdle(idle.BusySpin()))
	require.NoError(t, err)
	require.NoError(t, r.Start())
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			assert.NoError(t, r.CloseContext(context.Background()))
			// Every caller, not only the first, returns after OnClose.
			assert.Equal(t, int32(1), a.closes.Load())
		})
	}
	wg.Wait()
	require.Equal(t, int32(1), a.closes.Load())
}

func TestCloseFromInsideDoWorkDoesNotDeadlock(t *testing.T) {
	a := &fakeAgent{role: "self"}
	var r *Runner
	closeErr := make(chan error, 1)
	a.work = func(cycle int64) (int, error) {
		if cycle == 5 {
			closeErr <- r.Close()
		}
		return 1, nil
	}
	r, err := New(a, WithIdle(idle.NoOp()))
	require.NoError(t, err)
	require.NoError(t, r.Start())
	waitDone(t, r)
	require.NoError(t, <-closeErr)
	require.Equal(t, int64(5), a.cycles.Load(), "the stop flag is seen before the next DoWork")
	require.Equal(t, []string{"start", "close"}, a.Events())
	require.NoError(t, r.Close(), "a later close from another goroutine returns at once")
}

func TestCloseFromErrorHandlerDoesNotDeadlock(t *testing.T) {
	a := &fakeAgent{role: "handler-close"}
	boom := errors.New("boom")
	a.work = func(int64) (int, error) { return 0, boom }
	var r *Runner
	var got errs
	r, err := New(a, WithIdle(idle.NoOp()), WithErrorHandler(func(err error) {
		got.handle(err)
		got.handle(r.CloseContext(context.Background()))
	}))
	require.NoError(t, err)
	require.NoError(t, r.Start())
	waitDone(t, r)
	require.Equal(t, []error{boom, nil}, got.get())
	require.Equal(t, int64(1), r.Stats().Errors)
}

func TestCloseFromOnStartStopsBeforeTheFirstCycle(t *testing.T) {
	a := &fakeAgent{role: "start-close"}
	var r *Runner
	a.start = func() error { return r.Close() }
	r, err := New(a)
	require.NoError(t, err)
	require.NoError(t, r.Start())
	waitDone(t, r)
	require.Zero(t, a.cycles.Load())
	require.Equal(t, []string{"start", "close"}, a.Events())
}

func TestOnStartFailureStillRunsOnClose(t *testing.T) {
	a := &fakeAgent{role: "bad-start"}
	cause := errors.New("no port")
	a.start = func() error { return cause }
	var got errs
	r, err := New(a, WithErrorHandler(got.handle))
	require.NoError(t, err)
	err = r.Start()
	require.ErrorIs(t, err, cause)
	require.Contains(t, err.Error(), "bad-start")
	require.Equal(t, []string{"start", "close"}, a.Events(), "OnClose returned before Start did")
	require.Zero(t, a.cycles.Load())
	require.Empty(t, got.get(), "Start returns the failure; it is not reported twice")
	require.NoError(t, r.Close())
	waitDone(t, r)
}

func TestOnStartPanicIsReturnedByStart(t *testing.T) {
	a := &fakeAgent{role: "panic-start"}
	a.start = func() error { panic("kaput") }
	r, err := New(a)
	require.NoError(t, err)
	err = r.Start()
	var pe *PanicError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "kaput", pe.Value)
	require.Equal(t, int32(1), a.closes.Load())
}

func TestOnCloseErrorGoesToHandler(t *testing.T) {
	a := &fakeAgent{role: "bad-close"}
	cause := errors.New("flush failed")
	a.close = func() error { return cause }
	var got errs
	r, err := New(a, WithErrorHandler(got.handle))
	require.NoError(t, err)
	require.NoError(t, r.Start())
	require.NoError(t, r.Close())
	require.Len(t, got.get(), 1)
	require.ErrorIs(t, got.get()[0], cause)
	require.Zero(t, r.Stats().Errors, "not counted: the agent was no longer running")
}

func TestPanicInDoWorkWithStopPolicy(t *testing.T) {
	a := &fakeAgent{role: "panicky"}
	a.work = func(cycle int64) (int, error) {
		if cycle == 3 {
			panic(errors.New("index out of luck"))
		}
		return 0, nil
	}
	var got errs
	r, err := New(a, WithIdle(idle.NoOp()), WithErrorHandler(got.handle)) // stops on a panic by default
	require.NoError(t, err)
	require.NoError(t, r.Start())
	waitDone(t, r)
	require.Len(t, got.get(), 1)
	var pe *PanicError
	require.ErrorAs(t, got.get()[0], &pe)
	require.Equal(t, "panicky", pe.Role)
	require.EqualError(t, pe.Unwrap(), "index out of luck")
	require.Contains(t, string(pe.Stack), "runner.(*fakeAgent).DoWork", "the stack is the panicking one")
	require.Same(t, pe, r.Err())
	require.Equal(t, int64(3), a.cycles.Load())
	require.Equal(t, []string{"start", "close"}, a.Events(), "unlike Java, OnClose runs after a panic")
	require.Equal(t, int64(1), r.Stats().Errors)
	require.NoError(t, r.Close())
}

func TestPanicInDoWorkWithContinuePolicy(t *testing.T) {
	a := &fakeAgent{role: "resilient"}
	a.work = func(cycle int64) (int, error) {
		switch cycle {
		case 3, 5:
			panic("again")
		case 10:
			return 0, agent.ErrDone
		}
		return 1, nil
	}
	var got errs
	r, err := New(a, WithIdle(idle.NoOp()), WithErrorHandler(got.handle), WithStopOnPanic(false))
	require.NoError(t, err)
	require.NoError(t, r.Start())
	waitDone(t, r)
	require.Len(t, got.get(), 2)
	require.Nil(t, r.Err())
	st := r.Stats()
	require.Equal(t, int64(10), st.DutyCycles)
	require.Equal(t, int64(7), st.TotalWork)
	require.Equal(t, int64(3), st.IdleCycles, "two panics and the terminating cycle")
	require.Equal(t, int64(2), st.Errors)
}

func TestErrorPolicies(t *testing.T) {
	boom := errors.New("boom")
	t.Run("continue counts and keeps running", func(t *testing.T) {
		a := &fakeAgent{role: "cont"}
		a.work = func(cycle int64) (int, error) {
			if cycle == 6 {
				return 0, agent.ErrDone
			}
			if cycle%2 == 0 {
				return 0, boom
			}
			return 1, nil
		}
		var got errs
		r, err := New(a, WithIdle(idle.NoOp()), WithErrorHandler(got.handle))
		require.NoError(t, err)
		require.NoError(t, r.Start())
		waitDone(t, r)
		require.Equal(t, []error{boom, boom}, got.get())
		require.Equal(t, int64(2), r.Stats().Errors)
		require.Nil(t, r.Err())
	})
	t.Run("stop", func(t *testing.T) {
		a := &fakeAgent{role: "stopper"}
		a.work = func(cycle int64) (int, error) { return 0, boom }
		var got errs
		r, err := New(a, WithIdle(idle.NoOp()), WithErrorHandler(got.handle), WithStopOnError(true))
		require.NoError(t, err)
		require.NoError(t, r.Start())
		waitDone(t, r)
		require.Equal(t, []error{boom}, got.get())
		require.Equal(t, boom, r.Err())
		require.Equal(t, int64(1), a.cycles.Load())
	})
}

func TestTerminationErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		err      error
		reported bool
	}{
		{"expected", agent.ErrDone, false},
		{"unexpected", agent.ErrTerminated, true},
		{"wrapped unexpected", agent.Terminate(errors.New("peer gone")), true},
		{"plain sentinel", agent.ErrTermination, true},
		{"joined with done", errors.Join(errors.New("flush failed"), agent.ErrDone), true},
		{"joined dones", errors.Join(agent.ErrDone, fmt.Errorf("last: %w", agent.ErrDone)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &fakeAgent{role: "term"}
			a.work = func(cycle int64) (int, error) {
				if cycle == 4 {
					return 0, tc.err
				}
				return 1, nil
			}
			var got errs
			r, err := New(a, WithIdle(idle.NoOp()), WithErrorHandler(got.handle))
			require.NoError(t, err)
			require.NoError(t, r.Start())
			waitDone(t, r)
			require.Equal(t, int64(4), a.cycles.Load())
			require.Zero(t, r.Stats().Errors, "terminations are never counted")
			if tc.reported {
				require.Equal(t, []error{tc.err}, got.get())
				require.Equal(t, tc.err, r.Err())
			} else {
				require.Empty(t, got.get())
				require.Nil(t, r.Err())
			}
			require.Equal(t, []string{"start", "close"}, a.Events())
		})
	}
}

// stuckAgent blocks in DoWork until released, ignoring any context.
type stuckAgent struct {
	fakeAgent
	entered, release chan struct{}
}

func TestCloseTimesOutOnAStuckAgentAndNamesIt(t *testing.T) {
	a := &stuckAgent{fakeAgent: fakeAgent{role: "stuck-agent"}, entered: make(chan struct{}), release: make(chan struct{})}
	a.work = func(cycle int64) (int, error) {
		if cycle == 1 {
			close(a.entered)
			<-a.release
		}
		return 0, nil
	}
	defer func(d time.Duration) { closeTimeout = d }(closeTimeout)
	closeTimeout = 50 * time.Millisecond
	r, err := New(a)
	require.NoError(t, err)
	require.NoError(t, r.Start())
	<-a.entered

	err = r.Close()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, err.Error(), "stuck-agent")
	require.Contains(t, err.Error(), "50ms")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	err = r.CloseContext(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, err.Error(), "stuck-agent")
	require.Zero(t, a.closes.Load())

	close(a.release)
	waitDone(t, r)
	require.NoError(t, r.Close(), "closing again after it stopped succeeds")
	require.Equal(t, int32(1), a.closes.Load())
}

// blockingAgent blocks in DoWork on its context, as an agent blocked in a
// read would.
type blockingAgent struct {
	fakeAgent
	ctx context.Context
}

func (b *blockingAgent) BindContext(ctx context.Context) { b.ctx = ctx }

func TestContextAwareAgentBlockedInDoWorkObservesClose(t *testing.T) {
	a := &blockingAgent{fakeAgent: fakeAgent{role: "blocked"}}
	a.work = func(int64) (int, error) {
		<-a.ctx.Done()
		return 0, a.ctx.Err()
	}
	var got errs
	r, err := New(a, WithErrorHandler(got.handle))
	require.NoError(t, err)
	require.NoError(t, r.Start())
	waitFor(t, func() bool { return a.cycles.Load() == 1 })
	require.NoError(t, r.Close())
	require.Empty(t, got.get(), "context.Canceled after a stop request is not an error")
	require.Equal(t, []string{"start", "close"}, a.Events())
}

func TestNewRejectsBadOptions(t *testing.T) {
	a := &fakeAgent{role: "opts"}
	for name, opt := range map[string]Option{
		"nil idle":     WithIdle(nil),
		"negative cpu": WithCPUs(-1),
		"huge cpu":     WithCPUs(maxCPU),
		"nil handler":  WithErrorHandler(nil),
		"zero slack":   WithTimerSlack(0),
	} {
		_, err := New(a, opt)
		require.ErrorIs(t, err, ErrBadOption, name)
	}
	_, err := New(nil)
	require.ErrorIs(t, err, ErrBadOption)
}

// The handler "may call the runner's Close" and, for an agent closed before
// it started, runs on the closing goroutine. If OnClose fails there, the
// handler's Close must not wait on done, which is only closed after the
// handler returns: that self-deadlock was broken only by the close timeout.
func TestCloseFromHandlerWhileClosingBeforeStartDoesNotDeadlock(t *testing.T) {
	var r *Runner
	var inner error
	var innerTook time.Duration
	a := &fakeAgent{role: "x", close: func() error { return errors.New("close failed") }}
	r, err := New(a, WithErrorHandler(func(error) {
		t0 := time.Now()
		inner = r.Close()
		innerTook = time.Since(t0)
	}))
	require.NoError(t, err)
	require.NoError(t, r.Close())
	require.NoError(t, inner, "Close from the handler on the closing goroutine (took %v)", innerTook)
}

// Closing an agent that has already stopped must succeed, whatever the
// context: CloseContext selected between done and ctx.Done at random.
func TestCloseContextOfAStoppedAgentSucceedsWithAnEndedContext(t *testing.T) {
	a := &fakeAgent{role: "done", work: func(int64) (int, error) { return 0, agent.ErrDone }}
	r, err := New(a, WithIdle(idle.NoOp()))
	require.NoError(t, err)
	require.NoError(t, r.Start())
	waitDone(t, r)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fails := 0
	for range 200 {
		if err := r.CloseContext(ctx); err != nil {
			fails++
		}
	}
	require.Zero(t, fails, "CloseContext of an already stopped agent failed %d/200 times", fails)
}

// OnStart that exits its goroutine (runtime.Goexit, e.g. t.FailNow in a test
// agent) left Start blocked forever on the ready channel.
func TestStartReturnsWhenOnStartExitsItsGoroutine(t *testing.T) {
	a := &fakeAgent{role: "goexit", start: func() error { runtime.Goexit(); return nil }}
	r, err := New(a)
	require.NoError(t, err)
	res := make(chan error, 1)
	go func() { res <- r.Start() }()
	select {
	case err := <-res:
		require.ErrorIs(t, err, ErrGoexit)
		require.Contains(t, err.Error(), "goexit")
	case <-time.After(2 * time.Second):
		t.Fatal("Start still blocked 2s after the agent's goroutine exited (Done closed: " +
			map[bool]string{true: "yes", false: "no"}[isClosed(r.Done())] + ")")
	}
	require.True(t, isClosed(r.Done()), "Start returned before the agent stopped")
	require.Equal(t, []string{"start", "close"}, a.Events(), "OnClose ran as after a failed OnStart")
	require.NoError(t, r.Err(), "a failed start is Start's error, not Err's")
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// Start racing Close: OnClose exactly once, OnStart at most once, Start
// either succeeds or fails with ErrClosed, nothing hangs.
func TestStartRacingCloseClosesOnceAndNeverHangs(t *testing.T) {
	for range 200 {
		a := &fakeAgent{role: "race"}
		r, err := New(a, WithIdle(idle.NoOp()))
		require.NoError(t, err)
		startErr := make(chan error, 1)
		go func() { startErr <- r.Start() }()
		require.NoError(t, r.Close())
		if err := <-startErr; err != nil {
			require.ErrorIs(t, err, ErrClosed)
			require.Zero(t, a.starts.Load())
		}
		waitDone(t, r)
		require.Equal(t, int32(1), a.closes.Load())
		require.LessOrEqual(t, a.starts.Load(), int32(1))
		require.False(t, r.Stats().Running)
	}
}

type ctxTerminator struct {
	fakeAgent
	ctx context.Context
}

func (c *ctxTerminator) BindContext(ctx context.Context) { c.ctx = ctx }

// An agent blocked in DoWork that answers the cancellation of its context
// with a termination carrying ctx.Err(): the stop was Close's, so Err stays
// nil and the handler is not called.
func TestErrIsNilAfterCloseWhenTheAgentTerminatesOnCancel(t *testing.T) {
	var got errs
	a := &ctxTerminator{}
	a.role = "blk"
	a.work = func(int64) (int, error) {
		<-a.ctx.Done()
		return 0, agent.Terminate(a.ctx.Err())
	}
	r, err := New(a, WithErrorHandler(got.handle))
	require.NoError(t, err)
	require.NoError(t, r.Start())
	require.NoError(t, r.Close())
	require.NoError(t, r.Err(), "Err after Close")
	require.Empty(t, got.get())
}

// A termination the agent returns after Close asked it to stop is not why it
// stopped: Err stays nil; a cause other than the context's cancellation is
// still reported.
func TestTerminationAfterCloseIsReportedButIsNotErr(t *testing.T) {
	var got errs
	a := &ctxTerminator{}
	a.role = "blk2"
	gone := errors.New("peer gone")
	a.work = func(int64) (int, error) {
		<-a.ctx.Done()
		return 0, agent.Terminate(gone)
	}
	r, err := New(a, WithErrorHandler(got.handle))
	require.NoError(t, err)
	require.NoError(t, r.Start())
	require.NoError(t, r.Close())
	require.NoError(t, r.Err())
	require.Len(t, got.get(), 1)
	require.ErrorIs(t, got.get()[0], gone)
}

// OnClose of a never-started agent runs on the closing goroutine; a Close
// from OnClose itself returns at once instead of waiting for done.
func TestCloseFromOnCloseWhileClosingBeforeStartReturns(t *testing.T) {
	var r *Runner
	inner := make(chan error, 1)
	a := &fakeAgent{role: "x2", close: func() error {
		inner <- r.CloseContext(context.Background())
		return nil
	}}
	r, err := New(a)
	require.NoError(t, err)
	res := make(chan error, 1)
	go func() { res <- r.Close() }()
	select {
	case err := <-res:
		require.NoError(t, err)
	case <-time.After(hangGuard):
		t.Fatal("Close from OnClose waited for its own caller")
	}
	require.NoError(t, <-inner)
	require.True(t, isClosed(r.Done()))
	require.False(t, r.onAgentThread(), "the closer is not the agent's thread once it stopped")
}

// DoWork that exits its goroutine (runtime.Goexit) stops the agent: OnClose
// runs, Done closes, Err wraps ErrGoexit, the handler is told.
func TestGoexitInDoWorkStopsTheAgent(t *testing.T) {
	a := &fakeAgent{role: "gx", work: func(c int64) (int, error) {
		if c == 3 {
			runtime.Goexit()
		}
		return 0, nil
	}}
	var got errs
	r, err := New(a, WithIdle(idle.NoOp()), WithErrorHandler(got.handle))
	require.NoError(t, err)
	require.NoError(t, r.Start())
	waitDone(t, r)
	require.ErrorIs(t, r.Err(), ErrGoexit)
	require.Len(t, got.get(), 1)
	require.ErrorIs(t, got.get()[0], ErrGoexit)
	require.Equal(t, []string{"start", "close"}, a.Events())
	require.NoError(t, r.Close())
}

// OnClose that exits its goroutine still lets Done close, after the loop and
// when a never-started agent is closed on another goroutine.
func TestGoexitInOnCloseStillClosesDone(t *testing.T) {
	var got errs
	a := &fakeAgent{role: "gx-close", close: func() error { runtime.Goexit(); return nil }}
	r, err := New(a, WithErrorHandler(got.handle))
	require.NoError(t, err)
	require.NoError(t, r.Start())
	require.NoError(t, r.Close())
	require.NoError(t, r.Err(), "closed by Close")
	require.Len(t, got.get(), 1)
	require.ErrorIs(t, got.get()[0], ErrGoexit)

	b := &fakeAgent{role: "gx-never", close: func() error { runtime.Goexit(); return nil }}
	rb, err := New(b, WithErrorHandler(func(error) {}))
	require.NoError(t, err)
	go func() { _ = rb.Close() }() // this goroutine ends in OnClose
	waitDone(t, rb)
	require.Equal(t, int32(1), b.closes.Load())
	require.ErrorIs(t, rb.Start(), ErrClosed)
}

// A panic is a panic even when its value is a termination error: it is a
// *PanicError, counted, reported and subject to the panic policy, not a
// silent request to stop (the docs: "A panic in DoWork: a *PanicError ...
// counted and reported").
func TestPanicWithATerminationValueIsAPanic(t *testing.T) {
	a := &fakeAgent{role: "panics-done"}
	a.work = func(cycle int64) (int, error) {
		if cycle == 2 {
			panic(agent.ErrDone)
		}
		return 0, nil
	}
	var got errs
	r, err := New(a, WithIdle(idle.NoOp()), WithErrorHandler(got.handle)) // stops on a panic by default
	require.NoError(t, err)
	require.NoError(t, r.Start())
	waitDone(t, r)
	var pe *PanicError
	require.ErrorAs(t, r.Err(), &pe, "Err is the panic")
	require.Len(t, got.get(), 1, "the panic is reported")
	require.Equal(t, int64(1), r.Stats().Errors, "the panic is counted")
	require.NoError(t, r.Close())
}

// The agent's context ends when the agent stops, however it stops, as it
// does with an Invoker (whose termination and failed start call Close):
// a goroutine or context.AfterFunc the agent tied to it must not outlive
// the agent just because nobody called Close.
func TestContextIsCancelledWhenTheAgentStopsByItself(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func() error
		work  func(int64) (int, error)
	}{
		{"expected termination", nil, func(c int64) (int, error) { return 0, agent.ErrDone }},
		{"unexpected termination", nil, func(c int64) (int, error) { return 0, agent.ErrTerminated }},
		{"failed start", func() error { return errors.New("no") }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &blockingAgent{fakeAgent: fakeAgent{role: "self-stop", start: tc.start, work: tc.work}}
			var atClose error
			a.close = func() error { atClose = a.ctx.Err(); return nil }
			r, err := New(a, WithIdle(idle.NoOp()), WithErrorHandler(func(error) {}))
			require.NoError(t, err)
			_ = r.Start()
			waitDone(t, r)
			require.ErrorIs(t, a.ctx.Err(), context.Canceled, "context after the agent stopped")
			require.ErrorIs(t, atClose, context.Canceled, "context seen by OnClose, as after Close")
		})
	}
}

// One idle strategy given to two runners would be raced on: the second
// runner is refused while the first has not stopped, and accepted after.
func TestIdleStrategyIsNotShared(t *testing.T) {
	s := idle.Backoff()
	r1, err := New(&fakeAgent{role: "first"}, WithIdle(s))
	require.NoError(t, err)
	_, err = New(&fakeAgent{role: "second"}, WithIdle(s))
	require.ErrorIs(t, err, ErrBadOption)
	require.ErrorContains(t, err, "in use by runner first")

	require.NoError(t, r1.Start())
	_, err = New(&fakeAgent{role: "second"}, WithIdle(s))
	require.ErrorIs(t, err, ErrBadOption)
	require.NoError(t, r1.Close())

	r2, err := New(&fakeAgent{role: "second"}, WithIdle(s))
	require.NoError(t, err, "free once the first runner stopped")
	require.NoError(t, r2.Close()) // never started: closed on this goroutine, and free again
	r3, err := New(&fakeAgent{role: "third"}, WithIdle(s))
	require.NoError(t, err)
	require.NoError(t, r3.Close())

	// Separate instances, and the default, are never refused.
	a, err := New(&fakeAgent{role: "a"}, WithIdle(idle.Backoff()))
	require.NoError(t, err)
	b, err := New(&fakeAgent{role: "b"}, WithIdle(idle.Backoff()))
	require.NoError(t, err)
	require.NoError(t, a.Close())
	require.NoError(t, b.Close())
}

// TestCloseRequested tells a Close from an agent stopping by itself, which
// ShutdownOnStop relies on (both set the stop flag).
func TestCloseRequested(t *testing.T) {
	done := &fakeAgent{role: "done", work: func(int64) (int, error) { return 0, agent.ErrDone }}
	r, err := New(done)
	require.NoError(t, err)
	require.NoError(t, r.Start())
	<-r.Done()
	require.False(t, r.closeRequested(), "stopped by itself")
	require.NoError(t, r.Close())
	require.True(t, r.closeRequested())

	busy := &fakeAgent{role: "busy", work: func(int64) (int, error) { return 1, nil }}
	r, err = New(busy)
	require.NoError(t, err)
	require.NoError(t, r.Start())
	require.NoError(t, r.Close())
	require.True(t, r.closeRequested())
}

// TestErrorsSayRunnerOnce: an error that wraps one of the package's
// sentinels names the package once (the sentinel's "runner:").
func TestErrorsSayRunnerOnce(t *testing.T) {
	_, err := New(&fakeAgent{role: "pinger"}, WithIdle(nil))
	require.ErrorIs(t, err, ErrBadOption)
	require.Equal(t, 1, strings.Count(err.Error(), "runner:"), err.Error())
	r, err := New(&fakeAgent{role: "pinger", work: func(int64) (int, error) { return 0, nil }})
	require.NoError(t, err)
	require.NoError(t, r.Close())
	err = r.Start()
	require.ErrorIs(t, err, ErrClosed)
	require.Equal(t, "agent pinger: runner: closed", err.Error())
}
