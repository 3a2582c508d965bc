package agent

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
)

// Request is an add or remove submitted to a DynamicComposite. It completes
// on the composite's thread at the start of its next duty cycle (or when
// the composite closes).
type Request struct {
	agent  Agent
	remove bool
	done   chan struct{}
	err    error
}

// Done is closed when the request has been applied (or refused).
func (r *Request) Done() <-chan struct{} { return r.done }

// Wait blocks until the request completes or ctx ends, and returns the
// request's outcome or the context's error. The outcome is nil, the added
// agent's OnStart error, the removed agent's OnClose error, an error
// wrapping ErrArgument (the agent was not a member, or was one already),
// ErrAborted when a member callback panicked (or exited its
// goroutine) while this request was applied, or ErrClosed when the
// composite closed first. A completed request returns its outcome even if
// ctx has ended, so Wait after Done is closed does not block.
func (r *Request) Wait(ctx context.Context) error {
	select {
	case <-r.done:
		return r.err
	default:
	}
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *Request) complete(err error) {
	r.err = err
	close(r.done)
}

// DynamicComposite runs a changing group of agents as one agent (Agrona's
// DynamicCompositeAgent, without its one-request-at-a-time limit).
//
// Add and Remove may be called from any goroutine at any time; they queue a
// Request that the composite applies on its own thread at the start of its
// next DoWork, in submission order, before the members' work. An added
// agent's OnStart runs then; if it fails, its OnClose runs too and the
// agent is not added. A removed agent's OnClose runs then. The outcome of
// each request is reported only through its Request (not as an error of
// DoWork), so a bad member cannot disturb the others.
//
// Members are compared by identity (==), so their values must be
// comparable (pointers always are; a struct value holding a slice, a map or
// a func, directly or in an interface field, is refused with an error
// wrapping ErrArgument). DoWork, work counts and failures of the
// members follow NewComposite, with the same resumable index.
//
// A panic (or runtime.Goexit) in a member's callback while the queued
// requests are applied does not lose them: the request being applied
// completes with an error wrapping ErrAborted (and the panic value, if it
// is an error); an agent being added whose BindContext or OnStart did not
// return is closed (OnClose) and not added; the requests not yet applied go
// back to the head of the queue, for the next DoWork or, if the composite is
// closed first, ErrClosed. Then the panic propagates out of DoWork, for the
// runner to recover and report.
//
// OnClose closes every member (joining their errors; a panicking member
// does not keep the others from being closed, as in NewComposite) and
// completes any request still queued with ErrClosed; Add and Remove after that return
// ErrClosed.
type DynamicComposite struct {
	role   string
	agents []Agent // owned by the agent's thread
	next   int
	ctx    context.Context
	// cancels holds, for each ContextAware member, the cancel function of
	// the context it was bound to: a child of ctx, cancelled when the
	// member is removed, so nothing it tied to its context outlives it.
	cancels map[Agent]context.CancelFunc

	pending atomic.Int32 // number of queued requests, checked each cycle without the lock
	mu      sync.Mutex
	queue   []*Request
	spare   []*Request
	closed  bool
}

// NewDynamicComposite returns a composite named role with the initial
// members agents (possibly none).
func NewDynamicComposite(role string, agents ...Agent) (*DynamicComposite, error) {
	for i, a := range agents {
		if err := checkMember(a); err != nil {
			return nil, fmt.Errorf("%w at index %d", err, i)
		}
		for _, b := range agents[:i] {
			if a == b {
				return nil, fmt.Errorf("%w: %s at index %d is already a member", ErrArgument, a.RoleName(), i)
			}
		}
	}
	return &DynamicComposite{role: role, agents: append([]Agent(nil), agents...)}, nil
}

func checkMember(a Agent) error {
	if a == nil {
		return fmt.Errorf("%w: nil agent", ErrArgument)
	}
	// The value, not the type: a struct holding an uncomparable value in an
	// interface field has a comparable type, yet == on it panics.
	if !reflect.ValueOf(a).Comparable() {
		return fmt.Errorf("%w: %T is not comparable", ErrArgument, a)
	}
	return nil
}

// RoleName returns the role given to NewDynamicComposite.
func (d *DynamicComposite) RoleName() string { return d.role }

// Add queues the addition of a. The returned Request reports when the
// agent has been started and added, and what error that met. It fails at
// once with ErrClosed, or an error wrapping ErrArgument for a nil or
// uncomparable agent.
func (d *DynamicComposite) Add(a Agent) (*Request, error) { return d.submit(a, false) }

// Remove queues the removal of a (found by identity). The returned Request
// reports when the agent has been removed and closed, and what error that
// met (an error wrapping ErrArgument if it was not a member).
func (d *DynamicComposite) Remove(a Agent) (*Request, error) { return d.submit(a, true) }

func (d *DynamicComposite) submit(a Agent, remove bool) (*Request, error) {
	if err := checkMember(a); err != nil {
		return nil, err
	}
	r := &Request{agent: a, remove: remove, done: make(chan struct{})}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	d.queue = append(d.queue, r)
	d.pending.Add(1)
	return r, nil
}

// BindContext keeps ctx for agents added later and binds every current
// member that is ContextAware to a context of its own derived from ctx:
// cancelled with ctx, and also when the member is removed (before its
// OnClose, as a runner does).
func (d *DynamicComposite) BindContext(ctx context.Context) {
	d.ctx = ctx
	for _, a := range d.agents {
		d.bind(a)
	}
}

// bind binds a, if it is ContextAware and the composite has a context, to
// a child context of its own.
func (d *DynamicComposite) bind(a Agent) {
	ca, ok := a.(ContextAware)
	if !ok || d.ctx == nil {
		return
	}
	ctx, cancel := context.WithCancel(d.ctx)
	if d.cancels == nil {
		d.cancels = map[Agent]context.CancelFunc{}
	}
	d.cancels[a] = cancel
	ca.BindContext(ctx)
}

// unbind cancels a's own context, if it has one.
func (d *DynamicComposite) unbind(a Agent) {
	if cancel, ok := d.cancels[a]; ok {
		delete(d.cancels, a)
		cancel()
	}
}

// OnStart starts the initial members in order and joins their errors.
func (d *DynamicComposite) OnStart() error {
	return startAll(d.agents)
}

// DoWork applies queued requests, then runs one duty cycle of every member.
func (d *DynamicComposite) DoWork() (int, error) {
	if d.pending.Load() != 0 {
		d.apply()
	}
	return doWorkFrom(d.agents, &d.next)
}

func (d *DynamicComposite) apply() {
	d.mu.Lock()
	reqs := d.queue
	d.queue = d.spare[:0]
	d.pending.Store(0)
	d.mu.Unlock()
	i := 0
	defer func() {
		if i == len(reqs) {
			return // every request applied
		}
		// A member callback panicked, or called runtime.Goexit, while
		// reqs[i] was applied.
		v := recover()
		d.abort(reqs, i, v)
		if v != nil {
			panic(v) // for the runner's recovery to report
		}
	}()
	for ; i < len(reqs); i++ {
		r := reqs[i]
		if r.remove {
			r.complete(d.removeNow(r.agent))
		} else {
			r.complete(d.addNow(r.agent))
		}
		reqs[i] = nil
	}
	d.mu.Lock()
	d.spare = reqs[:0]
	d.mu.Unlock()
}

// abort completes reqs[i], whose application was cut short by the panic
// value v (nil: runtime.Goexit), with ErrAborted, and puts reqs[i+1:] back
// at the head of the queue, or completes them with ErrClosed if the
// composite has closed. It calls no member method: one may be what panicked.
func (d *DynamicComposite) abort(reqs []*Request, i int, v any) {
	var err error
	switch ve := v.(type) {
	case nil:
		err = fmt.Errorf("%w: applying a request for %T: runtime.Goexit", ErrAborted, reqs[i].agent)
	case error:
		err = fmt.Errorf("%w: applying a request for %T: panic: %w", ErrAborted, reqs[i].agent, ve)
	default:
		err = fmt.Errorf("%w: applying a request for %T: panic: %v", ErrAborted, reqs[i].agent, v)
	}
	reqs[i].complete(err)
	rest := reqs[i+1:]
	d.mu.Lock()
	closed := d.closed
	if !closed && len(rest) > 0 {
		q := make([]*Request, 0, len(rest)+len(d.queue))
		q = append(q, rest...)
		old := d.queue // d.spare's array: drop its references
		d.queue = append(q, old...)
		clear(old)
		d.pending.Add(int32(len(rest)))
	}
	d.mu.Unlock()
	if closed {
		for _, r := range rest {
			r.complete(ErrClosed)
		}
	}
}

func (d *DynamicComposite) index(a Agent) int {
	for i, m := range d.agents {
		if m == a {
			return i
		}
	}
	return -1
}

func (d *DynamicComposite) addNow(a Agent) error {
	if d.index(a) >= 0 {
		return fmt.Errorf("%w: %s is already a member", ErrArgument, a.RoleName())
	}
	returned := false
	defer func() {
		if !returned {
			// BindContext or OnStart panicked or exited the goroutine: close
			// the agent as after a failed start; apply completes the request.
			d.unbind(a)
			_ = a.OnClose()
		}
	}()
	d.bind(a)
	err := a.OnStart()
	returned = true
	if err != nil {
		d.unbind(a)
		if cerr := a.OnClose(); cerr != nil {
			return fmt.Errorf("%s: OnStart: %w (then OnClose: %w)", a.RoleName(), err, cerr)
		}
		return fmt.Errorf("%s: OnStart: %w", a.RoleName(), err)
	}
	// Copy on write: the slice being iterated by a resumed DoWork is
	// never modified in place.
	agents := make([]Agent, len(d.agents)+1)
	copy(agents, d.agents)
	agents[len(d.agents)] = a
	d.agents = agents
	return nil
}

func (d *DynamicComposite) removeNow(a Agent) error {
	i := d.index(a)
	if i < 0 {
		return fmt.Errorf("%w: %s is not a member", ErrArgument, a.RoleName())
	}
	agents := make([]Agent, 0, len(d.agents)-1)
	agents = append(agents, d.agents[:i]...)
	agents = append(agents, d.agents[i+1:]...)
	d.agents = agents
	if d.next > i {
		d.next-- // keep resuming at the same member
	}
	if d.next > len(d.agents) {
		d.next = len(d.agents)
	}
	d.unbind(a)
	if err := a.OnClose(); err != nil {
		return fmt.Errorf("%s: OnClose: %w", a.RoleName(), err)
	}
	return nil
}

// OnClose closes every member in order, joins their errors, and completes
// queued requests with ErrClosed.
func (d *DynamicComposite) OnClose() error {
	d.mu.Lock()
	d.closed = true
	reqs := d.queue
	d.queue = nil
	d.pending.Store(0)
	d.mu.Unlock()
	for _, r := range reqs {
		r.complete(ErrClosed)
	}
	agents := d.agents
	d.agents = nil
	// The members' contexts end before their OnClose, as the composite's
	// own does when a runner closes it.
	for a, cancel := range d.cancels {
		delete(d.cancels, a)
		cancel()
	}
	return closeAll(agents)
}
