package agent

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestNewDynamicCompositeValidates(t *testing.T) {
	var log []string
	a := &scripted{role: "a", log: &log}
	_, err := NewDynamicComposite("dyn", a, nil)
	require.ErrorIs(t, err, ErrArgument)
	_, err = NewDynamicComposite("dyn", a, a)
	require.ErrorIs(t, err, ErrArgument)
	_, err = NewDynamicComposite("dyn", valueAgent{})
	require.ErrorIs(t, err, ErrArgument)
	d, err := NewDynamicComposite("dyn")
	require.NoError(t, err, "empty is allowed")
	require.Equal(t, "dyn", d.RoleName())
}

// valueAgent is not comparable (it holds a slice), so it cannot be a
// member: removal is by identity.
type valueAgent struct{ _ []int }

func (valueAgent) RoleName() string     { return "v" }
func (valueAgent) OnStart() error       { return nil }
func (valueAgent) OnClose() error       { return nil }
func (valueAgent) DoWork() (int, error) { return 0, nil }

func TestDynamicCompositeAppliesRequestsOnItsOwnCycle(t *testing.T) {
	var log []string
	a := &scripted{role: "a", log: &log}
	b := &scripted{role: "b", log: &log, results: []result{{2, nil}, {2, nil}}}
	d, err := NewDynamicComposite("dyn", a)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d.BindContext(ctx)
	require.NoError(t, d.OnStart())

	add, err := d.Add(b)
	require.NoError(t, err)
	require.Nil(t, errOf(add))
	select {
	case <-add.Done():
		t.Fatal("applied before the next cycle")
	default:
	}
	require.Equal(t, []string{"start a"}, log, "nothing happens on the submitting goroutine")

	n, err := d.DoWork()
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.NoError(t, add.Wait(context.Background()))
	require.Equal(t, []string{"start a", "start b", "work a", "work b"}, log)
	require.NotNil(t, b.ctx, "added members get a context derived from the bound one")
	require.NoError(t, b.ctx.Err())
	require.Equal(t, 2, len(d.agents))

	log = log[:0]
	rm, err := d.Remove(a)
	require.NoError(t, err)
	n, err = d.DoWork()
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.NoError(t, rm.Wait(context.Background()))
	require.Equal(t, []string{"close a", "work b"}, log)

	log = log[:0]
	again, err := d.Remove(a)
	require.NoError(t, err)
	dup, err := d.Add(b)
	require.NoError(t, err)
	_, err = d.DoWork()
	require.NoError(t, err)
	require.ErrorIs(t, errOf(again), ErrArgument)
	require.ErrorIs(t, errOf(dup), ErrArgument)
	require.Equal(t, []string{"work b"}, log)

	require.NoError(t, d.OnClose())
	_, err = d.Add(a)
	require.ErrorIs(t, err, ErrClosed)
}

func TestDynamicCompositeFailedAddIsReportedToTheRequester(t *testing.T) {
	var log []string
	bad := errors.New("bad config")
	closeErr := errors.New("also broken")
	a := &scripted{role: "a", log: &log, results: []result{{1, nil}}}
	b := &scripted{role: "b", log: &log, startErr: bad, closeErr: closeErr}
	d, err := NewDynamicComposite("dyn", a)
	require.NoError(t, err)
	require.NoError(t, d.OnStart())
	req, err := d.Add(b)
	require.NoError(t, err)
	n, err := d.DoWork()
	require.NoError(t, err, "a bad member does not fail the composite's cycle")
	require.Equal(t, 1, n)
	<-req.Done()
	require.ErrorIs(t, errOf(req), bad)
	require.ErrorIs(t, errOf(req), closeErr)
	require.Equal(t, []string{"start a", "start b", "close b", "work a"}, log)
	require.Equal(t, 1, len(d.agents))
}

func TestDynamicCompositeRemoveOnCloseErrorIsReported(t *testing.T) {
	var log []string
	boom := errors.New("flush")
	a := &scripted{role: "a", log: &log, closeErr: boom}
	d, err := NewDynamicComposite("dyn", a)
	require.NoError(t, err)
	req, err := d.Remove(a)
	require.NoError(t, err)
	_, err = d.DoWork()
	require.NoError(t, err)
	require.ErrorIs(t, errOf(req), boom)
	require.Zero(t, len(d.agents), "removed even though OnClose failed")
}

func TestDynamicCompositeRemoveKeepsTheResumePoint(t *testing.T) {
	var log []string
	boom := errors.New("boom")
	a := &scripted{role: "a", log: &log}
	b := &scripted{role: "b", log: &log, results: []result{{0, boom}}}
	c := &scripted{role: "c", log: &log}
	d, err := NewDynamicComposite("dyn", a, b, c)
	require.NoError(t, err)
	_, err = d.DoWork()
	require.ErrorIs(t, err, boom) // next is c
	_, err = d.Remove(a)
	require.NoError(t, err)
	log = log[:0]
	_, err = d.DoWork()
	require.NoError(t, err)
	require.Equal(t, []string{"close a", "work c"}, log, "still resumes at c")
}

func TestDynamicCompositeCloseCompletesPendingRequests(t *testing.T) {
	var log []string
	d, err := NewDynamicComposite("dyn", &scripted{role: "a", log: &log})
	require.NoError(t, err)
	req, err := d.Add(&scripted{role: "late", log: &log})
	require.NoError(t, err)
	require.NoError(t, d.OnClose())
	require.ErrorIs(t, req.Wait(context.Background()), ErrClosed)
	require.Equal(t, []string{"close a"}, log, "the pending agent is neither started nor closed")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pending := &Request{done: make(chan struct{})}
	require.ErrorIs(t, pending.Wait(ctx), context.Canceled)
}

// Adds and removes from many goroutines while the agent's goroutine runs
// cycles: every request completes exactly once (run with -race).
func TestDynamicCompositeConcurrentAdministration(t *testing.T) {
	d, err := NewDynamicComposite("dyn")
	require.NoError(t, err)
	require.NoError(t, d.OnStart())
	stop := make(chan struct{})
	cycles := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				cycles <- n
				return
			default:
			}
			_, _ = d.DoWork()
			n++
		}
	}()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				var log []string
				a := &scripted{role: "m", log: &log}
				add, err := d.Add(a)
				if err != nil {
					t.Error(err)
					return
				}
				if err := add.Wait(context.Background()); err != nil {
					t.Error(g, i, err)
				}
				rm, err := d.Remove(a)
				if err != nil {
					t.Error(err)
					return
				}
				if err := rm.Wait(context.Background()); err != nil {
					t.Error(g, i, err)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	require.Positive(t, <-cycles)
	require.Zero(t, len(d.agents))
	require.NoError(t, d.OnClose())
}

// A request that has completed must report its outcome; Wait selected at
// random between r.done and ctx.Done when both were ready.
func TestRequestWaitOnACompletedRequestWithAnEndedContextReportsTheOutcome(t *testing.T) {
	var log []string
	d, err := NewDynamicComposite("dyn")
	require.NoError(t, err)
	require.NoError(t, d.OnStart())
	a := &scripted{role: "a", log: &log}
	req, err := d.Add(a)
	require.NoError(t, err)
	_, err = d.DoWork()
	require.NoError(t, err)
	<-req.Done()
	require.NoError(t, errOf(req))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fails := 0
	for range 200 {
		if err := req.Wait(ctx); err != nil {
			fails++
		}
	}
	require.Zero(t, fails, "Wait on a completed request returned ctx.Err() %d/200 times", fails)
	require.NoError(t, d.OnClose())
}

type panicky struct{ scripted }

func (p *panicky) OnStart() error {
	*p.log = append(*p.log, "start "+p.role)
	panic("boom in OnStart")
}

// A panic while a batch of requests is applied (recovered by the runner, as
// runner does for DoWork) must not drop the rest of the batch: every request
// completes (at the latest when the composite closes), and the agent whose
// OnStart panicked is closed.
func TestDynamicCompositePanicDuringApplyKeepsTheQueuedRequests(t *testing.T) {
	var log []string
	d, err := NewDynamicComposite("dyn")
	require.NoError(t, err)
	require.NoError(t, d.OnStart())
	bad := &panicky{scripted{role: "bad", log: &log}}
	good := &scripted{role: "good", log: &log}
	r1, err := d.Add(bad)
	require.NoError(t, err)
	r2, err := d.Add(good)
	require.NoError(t, err)
	func() {
		defer func() { _ = recover() }() // what runner.doWork does
		_, _ = d.DoWork()
	}()
	require.NoError(t, d.OnClose())
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	e1 := r1.Wait(ctx)
	e2 := r2.Wait(ctx)
	require.Falsef(t, errors.Is(e1, context.DeadlineExceeded) || errors.Is(e2, context.DeadlineExceeded),
		"requests never completed: add(bad)=%v add(good)=%v; bad's OnClose ran: %v", e1, e2, log)
	require.ErrorIs(t, e1, ErrAborted)
	require.ErrorContains(t, e1, "boom in OnStart")
	require.ErrorIs(t, e2, ErrClosed, "closed before the next cycle applied it")
	require.Equal(t, []string{"start bad", "close bad"}, log, "closed like a failed start, never added")
}

type panickyClose struct{ scripted }

func (p *panickyClose) OnClose() error {
	*p.log = append(*p.log, "close "+p.role)
	panic(errors.New("boom in OnClose"))
}

// After a panic cut a batch short, the propagated panic reaches the driver,
// and the next DoWork applies the requests left, in order, before any
// submitted later.
func TestDynamicCompositeAppliesTheRestOfABatchAfterAPanic(t *testing.T) {
	var log []string
	a := &panickyClose{scripted{role: "a", log: &log}}
	d, err := NewDynamicComposite("dyn", a)
	require.NoError(t, err)
	require.NoError(t, d.OnStart())
	b := &scripted{role: "b", log: &log}
	c := &scripted{role: "c", log: &log}
	rm, err := d.Remove(a)
	require.NoError(t, err)
	addB, err := d.Add(b)
	require.NoError(t, err)
	var v any
	func() {
		defer func() { v = recover() }()
		_, _ = d.DoWork()
	}()
	require.ErrorContains(t, v.(error), "boom in OnClose", "the panic propagates out of DoWork")
	require.ErrorIs(t, errOf(rm), ErrAborted)
	require.ErrorContains(t, errOf(rm), "boom in OnClose")
	require.Equal(t, 0, len(d.agents), "a was removed before its OnClose panicked")
	select {
	case <-addB.Done():
		t.Fatal("b's request was applied or dropped, not kept")
	default:
	}
	addC, err := d.Add(c)
	require.NoError(t, err)
	log = log[:0]
	_, err = d.DoWork()
	require.NoError(t, err)
	require.NoError(t, addB.Wait(context.Background()))
	require.NoError(t, addC.Wait(context.Background()))
	require.Equal(t, []string{"start b", "start c", "work b", "work c"}, log)
	require.NoError(t, d.OnClose())
}

// holder has a comparable type (reflect.Type.Comparable is true) but its
// values are not comparable when the interface field holds a slice: == on
// two of them panics.
type holder struct{ v any }

func (holder) RoleName() string     { return "h" }
func (holder) OnStart() error       { return nil }
func (holder) OnClose() error       { return nil }
func (holder) DoWork() (int, error) { return 0, nil }

func TestNotComparableValueIsRejectedNotPanicking(t *testing.T) {
	var err error
	require.NotPanics(t, func() {
		_, err = NewDynamicComposite("dyn", holder{v: []int{1}}, holder{v: []int{2}})
	})
	require.ErrorIs(t, err, ErrArgument)
}

// TestDynamicCompositeRemovedMemberContextEnds: each member has a context
// of its own, derived from the composite's: a removed member's ends before
// its OnClose (nothing it tied to it outlives it), the others' stay live
// until the composite's ends or it closes.
func TestDynamicCompositeRemovedMemberContextEnds(t *testing.T) {
	var log []string
	a := &scripted{role: "a", log: &log}
	b := &scripted{role: "b", log: &log}
	c := &scripted{role: "c", log: &log}
	d, err := NewDynamicComposite("dyn", a, b)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d.BindContext(ctx)
	require.NoError(t, d.OnStart())
	add, err := d.Add(c)
	require.NoError(t, err)
	_, err = d.DoWork()
	require.NoError(t, err)
	require.NoError(t, errOf(add))

	rm, err := d.Remove(a)
	require.NoError(t, err)
	_, err = d.DoWork()
	require.NoError(t, err)
	require.NoError(t, errOf(rm))
	require.ErrorIs(t, a.ctx.Err(), context.Canceled, "the removed member's context ended")
	require.NoError(t, b.ctx.Err())
	require.NoError(t, c.ctx.Err())

	rm, err = d.Remove(c)
	require.NoError(t, err)
	_, err = d.DoWork()
	require.NoError(t, err)
	require.NoError(t, errOf(rm))
	require.ErrorIs(t, c.ctx.Err(), context.Canceled, "an added member's too")
	require.NoError(t, b.ctx.Err())

	require.NoError(t, d.OnClose())
	require.ErrorIs(t, b.ctx.Err(), context.Canceled, "every context ends with the composite")
	require.NoError(t, ctx.Err(), "the composite's own context is its driver's")
}

// errOf is a request's outcome once it is done, nil before.
func errOf(r *Request) error {
	select {
	case <-r.done:
		return r.err
	default:
		return nil
	}
}
