package message

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/dutyrt/duty/mailbox"
)

// denseRoutes is how many type ids (from 0) the router finds by indexing
// a slice; larger ids go through a map.
const denseRoutes = 256

// route delivers one message of its type to its handler: a
// mailbox.Receiver of its own, which the drain calls directly (Route).
type route interface {
	mailbox.Receiver
	// counts returns what the route counted itself (its fast path's).
	counts() (delivered, failed int64)
}

// Router hands each message to the handler registered for its type id.
// It is a mailbox.Receiver (DrainTo, mailbox.NewReceiverActor). Register
// every route before the first message; a Router is then used by the one
// goroutine that drains.
type Router struct {
	dense    [denseRoutes]route
	sparse   map[int32]route
	fallback func(m *mailbox.Message) error
	stats    RouterStats
}

var _ mailbox.Dispatcher = (*Router)(nil)

// RouterStats counts what a Router did with the messages it received.
type RouterStats struct {
	Delivered   int64 // consumed by a handler (including those that failed)
	Failed      int64 // the handler returned an error: consumed, reported
	Aborted     int64 // the handler was back-pressured: left for the next drain
	Undecodable int64 // did not decode: wrong length, invalid value, the codec's error
	NoRoute     int64 // no handler and no fallback
}

// NewRouter returns a router without routes.
func NewRouter() *Router { return &Router{} }

// Handle routes the messages of c's type id to h, which gets each one
// decoded into a *T valid only during the call. An error wraps
// ErrTypeID when the type id has a route already or is out of range.
//
// h's error decides what becomes of the message (Router.Receive): nil or
// most errors consume it; an error wrapping mailbox.ErrBackPressured leaves
// it for the next drain, which calls h with it again. h returns that only
// when a redelivery repeats nothing: typically the error of the one send
// it makes, a reply (Reply does this), before any other effect.
func Handle[T any](r *Router, c Codec[T], h func(v *T) error) error {
	id := c.TypeID()
	if id < 1 || id > mailbox.MaxTypeID {
		return fmt.Errorf("%w: %d is outside 1..%d", ErrTypeID, id, mailbox.MaxTypeID)
	}
	if r.lookup(id) != nil {
		return fmt.Errorf("%w: %d already has a handler", ErrTypeID, id)
	}
	var rt route
	if f, ok := c.(*Fixed[T]); ok {
		rt = newFixedRoute(r, f, h)
	} else {
		rt = &codecRoute[T]{r: r, c: c, id: id, h: h}
	}
	if id < denseRoutes {
		r.dense[id] = rt
	} else {
		if r.sparse == nil {
			r.sparse = make(map[int32]route)
		}
		r.sparse[id] = rt
	}
	return nil
}

// fixedRoute is the route of a Fixed type. It is not generic: the drain
// calls its Receive through mailbox.Receiver, and a method of a generic
// type is reached that way only through a wrapper that passes the type's
// dictionary, one more call per message. What needs T (the checks of a
// payload the fast path does not take, and the copy of an unaligned one)
// is in fixedSlow[T].
//
// The fast path hands the handler a view of the ring's bytes: one part of
// exactly Size bytes, aligned for T, of a type with no bool to check. The
// length compare also says whether the type is such a type: size is -1
// for one that is not, which no payload's length equals.
type fixedRoute struct {
	size      int
	alignMask uintptr
	// h is the handler, a func(*T) error, held as its pointer-shaped
	// twin (asHandler): the call passes the view's address as the *T.
	h func(unsafe.Pointer) error
	// The fast path's count, kept here rather than in the Router: no
	// pointer to chase per message (Router.Stats sums them).
	delivered int64
	r         *Router
	slow      func(m *mailbox.Message) (mailbox.Action, error) // fixedSlow[T].receive
}

func (x *fixedRoute) counts() (int64, int64) { return x.delivered, 0 }

func newFixedRoute[T any](r *Router, f *Fixed[T], h func(*T) error) *fixedRoute {
	size := f.size
	if len(f.bools) != 0 || f.size == 0 {
		size = -1
	}
	s := &fixedSlow[T]{r: r, f: f, h: h}
	return &fixedRoute{size: size, alignMask: f.align - 1, h: asHandler(h), r: r, slow: s.receive}
}

// asHandler returns h as a func of an unsafe.Pointer. The two func types
// have the same representation (a pointer to the closure) and the same
// calling convention: the one argument is a pointer either way, in the
// same register or stack slot, and the result is the same error. A call
// of the result with the address of a T is the call h(&t).
func asHandler[T any](h func(*T) error) func(unsafe.Pointer) error {
	return *(*func(unsafe.Pointer) error)(unsafe.Pointer(&h))
}

// Receive delivers one message (mailbox.Receiver): consumed, unless the
// handler was back-pressured (see Router.Receive). The common case, one
// aligned part of the right length and nothing to check, hands the
// handler a view of the ring here, without a further call; every other
// case goes to fixedSlow.
func (x *fixedRoute) Receive(m *mailbox.Message) (mailbox.Action, error) {
	if parts := m.Parts(); len(parts) == 1 {
		p := unsafe.SliceData(parts[0])
		if len(parts[0]) == x.size && uintptr(unsafe.Pointer(p))&x.alignMask == 0 {
			if err := x.h(unsafe.Pointer(p)); err != nil {
				return x.r.handled(err)
			}
			x.delivered++
			return mailbox.Continue, nil
		}
	}
	return x.slow(m)
}

// fixedSlow is fixedRoute for everything but its fast path: several
// parts, a wrong length, bools to check, a payload not aligned for T, an
// empty T.
type fixedSlow[T any] struct {
	r       *Router
	f       *Fixed[T]
	h       func(*T) error
	scratch T
}

func (x *fixedSlow[T]) receive(m *mailbox.Message) (mailbox.Action, error) {
	r, f := x.r, x.f
	if m.NumParts() != 1 {
		r.stats.Undecodable++
		return mailbox.Continue, errParts(f.id, m.NumParts())
	}
	p := m.Payload()
	if err := f.check(p); err != nil {
		r.stats.Undecodable++
		return mailbox.Continue, err
	}
	v := f.view(p)
	if v == nil {
		copy(bytesOf(&x.scratch), p)
		v = &x.scratch
	}
	return r.handled(x.h(v))
}

// codecRoute decodes into the route's own value.
type codecRoute[T any] struct {
	r       *Router
	c       Codec[T]
	id      int32
	h       func(*T) error
	scratch T
}

func (*codecRoute[T]) counts() (int64, int64) { return 0, 0 }

// Receive delivers one message (mailbox.Receiver): consumed, unless the
// handler was back-pressured (see Router.Receive).
func (x *codecRoute[T]) Receive(m *mailbox.Message) (mailbox.Action, error) {
	r := x.r
	if m.NumParts() != 1 {
		r.stats.Undecodable++
		return mailbox.Continue, errParts(x.id, m.NumParts())
	}
	if err := x.c.Decode(m.Payload(), &x.scratch); err != nil {
		r.stats.Undecodable++
		return mailbox.Continue, fmt.Errorf("message: type %d: %w", x.id, err)
	}
	return r.handled(x.h(&x.scratch))
}

// handled settles a handler's result: nil consumes the message; an error
// that wraps mailbox.ErrBackPressured (and not mailbox.ErrConsumerDead)
// leaves it in the mailbox and ends the drain (mailbox.Abort), so the next
// drain delivers it again; any other error consumes it and is reported.
//
//go:noinline
func (r *Router) handled(err error) (mailbox.Action, error) {
	if err == nil {
		r.stats.Delivered++
		return mailbox.Continue, nil
	}
	if isBackPressure(err) {
		r.stats.Aborted++
		return mailbox.Abort, nil
	}
	r.stats.Delivered++
	r.stats.Failed++
	return mailbox.Continue, err
}

// isBackPressure reports whether a handler's error leaves its message for
// the next drain: it wraps mailbox.ErrBackPressured (a send found its
// mailbox full and sent nothing) and not mailbox.ErrConsumerDead (that
// mailbox's consumer has stopped: waiting for room would never end).
func isBackPressure(err error) bool {
	if err == mailbox.ErrBackPressured {
		return true
	}
	return errors.Is(err, mailbox.ErrBackPressured) && !errors.Is(err, mailbox.ErrConsumerDead)
}

// Fallback sets the handler of messages whose type id has no route
// (without one they are counted in NoRoute and reported as an error
// wrapping ErrNoRoute).
func (r *Router) Fallback(h func(m *mailbox.Message) error) { r.fallback = h }

func (r *Router) lookup(id int32) route {
	if uint32(id) < denseRoutes {
		return r.dense[id]
	}
	return r.sparse[id]
}

// Receive routes one message (mailbox.Receiver). A handler's nil consumes
// the message. An error that wraps mailbox.ErrBackPressured (and not
// mailbox.ErrConsumerDead) leaves it in the mailbox: the drain ends there
// (mailbox.Abort), the next one delivers the same message again, and the
// router counts it in Aborted, not as a failure. Any other error, and a payload that does not
// decode, consume the message and are reported: not retried.
func (r *Router) Receive(m *mailbox.Message) (mailbox.Action, error) {
	if rt := r.lookup(m.TypeID()); rt != nil {
		return rt.Receive(m)
	}
	if r.fallback != nil {
		return r.handled(r.fallback(m))
	}
	r.stats.NoRoute++
	return mailbox.Continue, errNoRoute(m.TypeID())
}

// Route returns the Receiver of typeID's messages (mailbox.Dispatcher):
// its route, or the router itself for a type id without one (Receive then
// hands the message to the fallback, or counts and reports it).
func (r *Router) Route(typeID int32) mailbox.Receiver {
	if rt := r.lookup(typeID); rt != nil {
		return rt
	}
	return r
}

// Stats returns the router's counts. Same goroutine as Receive.
func (r *Router) Stats() RouterStats {
	st := r.stats
	add := func(rt route) {
		if rt != nil {
			d, f := rt.counts()
			st.Delivered += d
			st.Failed += f
		}
	}
	for _, rt := range r.dense {
		add(rt)
	}
	for _, rt := range r.sparse {
		add(rt)
	}
	return st
}

func errParts(typeID int32, n int) error {
	return fmt.Errorf("%w: type %d: a message of %d parts, want 1", ErrPayload, typeID, n)
}

func errNoRoute(typeID int32) error { return fmt.Errorf("%w: %d", ErrNoRoute, typeID) }
