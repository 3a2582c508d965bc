package agent

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewDynamicCompositeValidates(t *testing.T) {
	var log []string
	a := &scripted{role: "a", log: &log}
	_, err := NewDynamicComposite("dyn", a, nil)
	require.ErrorIs(t, err, ErrNilAgent)
	_, err = NewDynamicComposite("dyn", a, a)
	require.ErrorIs(t, err, ErrDuplicate)
	_, err = NewDynamicComposite("dyn", valueAgent{})
	require.ErrorIs(t, err, ErrNotComparable)
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
	require.Nil(t, add.Err())
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
	require.Same(t, ctx, b.ctx, "added members get the bound context")
	require.Equal(t, 2, d.Len())

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
	require.ErrorIs(t, again.Err(), ErrNotMember)
	require.ErrorIs(t, dup.Err(), ErrDuplicate)
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
	require.ErrorIs(t, req.Err(), bad)
	require.ErrorIs(t, req.Err(), closeErr)
	require.Equal(t, []string{"start a", "start b", "close b", "work a"}, log)
	require.Equal(t, 1, d.Len())
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
	require.ErrorIs(t, req.Err(), boom)
	require.Zero(t, d.Len(), "removed even though OnClose failed")
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
	require.Zero(t, d.Len())
	require.NoError(t, d.OnClose())
}
