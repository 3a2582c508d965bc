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

// Err is the outcome once Done is closed: nil, the added agent's OnStart
// error, the removed agent's OnClose error, ErrNotMember, ErrDuplicate, or
// ErrClosed when the composite closed first. Before Done is closed it
// returns nil.
func (r *Request) Err() error {
	select {
	case <-r.done:
		return r.err
	default:
		return nil
	}
}

// Wait blocks until the request completes or ctx ends, and returns Err or
// the context's error.
func (r *Request) Wait(ctx context.Context) error {
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
// Members are compared by identity (==), so their dynamic types must be
// comparable (pointers usually are). DoWork, work counts and failures of the
// members follow Composite, with the same resumable index.
//
// OnClose closes every member (joining their errors) and completes any
// request still queued with ErrClosed; Add and Remove after that return
// ErrClosed.
type DynamicComposite struct {
	role   string
	agents []Agent // owned by the agent's thread
	next   int
	ctx    context.Context

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
				return nil, fmt.Errorf("%w: %s at index %d", ErrDuplicate, a.RoleName(), i)
			}
		}
	}
	return &DynamicComposite{role: role, agents: append([]Agent(nil), agents...)}, nil
}

func checkMember(a Agent) error {
	if a == nil {
		return ErrNilAgent
	}
	if !reflect.TypeOf(a).Comparable() {
		return fmt.Errorf("%w: %T", ErrNotComparable, a)
	}
	return nil
}

// RoleName returns the role given to NewDynamicComposite.
func (d *DynamicComposite) RoleName() string { return d.role }

// Add queues the addition of a. The returned Request reports when the
// agent has been started and added, and what error that met. It fails at
// once with ErrNilAgent, ErrNotComparable or ErrClosed.
func (d *DynamicComposite) Add(a Agent) (*Request, error) { return d.submit(a, false) }

// Remove queues the removal of a (found by identity). The returned Request
// reports when the agent has been removed and closed, and what error that
// met (ErrNotMember if it was not a member).
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

// Len returns the number of members. Call it on the agent's thread only.
func (d *DynamicComposite) Len() int { return len(d.agents) }

// BindContext keeps ctx for agents added later and passes it to every
// current member that is ContextAware.
func (d *DynamicComposite) BindContext(ctx context.Context) {
	d.ctx = ctx
	bindAll(ctx, d.agents)
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
	for i, r := range reqs {
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
		return fmt.Errorf("%w: %s", ErrDuplicate, a.RoleName())
	}
	if ca, ok := a.(ContextAware); ok && d.ctx != nil {
		ca.BindContext(d.ctx)
	}
	if err := a.OnStart(); err != nil {
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
		return fmt.Errorf("%w: %s", ErrNotMember, a.RoleName())
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
	return closeAll(agents)
}
