package message

import (
	"fmt"
	"unsafe"

	"github.com/dutyrt/duty/mailbox"
)

// denseRoutes is how many type ids (from 0) the router finds by indexing
// a slice; larger ids go through a map.
const denseRoutes = 256

// route delivers one message of its type to its handler.
type route interface {
	deliver(r *Router, m *mailbox.Message) error
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

var _ mailbox.Receiver = (*Router)(nil)

// RouterStats counts what a Router did with the messages it received.
type RouterStats struct {
	Delivered   int64 // handed to a handler (including those that failed)
	Failed      int64 // the handler returned an error
	Undecodable int64 // did not decode: wrong length, invalid value, the codec's error
	NoRoute     int64 // no handler and no fallback
}

// NewRouter returns a router without routes.
func NewRouter() *Router { return &Router{} }

// Handle routes the messages of c's type id to h, which gets each one
// decoded into a *T valid only during the call. An error wraps
// ErrDuplicateRoute when the type id has a route already, or ErrTypeID.
func Handle[T any](r *Router, c Codec[T], h func(v *T) error) error {
	id := c.TypeID()
	if id < 1 || id > mailbox.MaxTypeID {
		return fmt.Errorf("%w: %d is outside 1..%d", ErrTypeID, id, mailbox.MaxTypeID)
	}
	if r.lookup(id) != nil {
		return fmt.Errorf("%w: %d", ErrDuplicateRoute, id)
	}
	var rt route
	if f, ok := c.(*Fixed[T]); ok {
		rt = newFixedRoute(f, h)
	} else {
		rt = &codecRoute[T]{c: c, id: id, h: h}
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

// fixedRoute hands the handler a view of the ring's bytes when they are
// aligned for T, a copy in the route's own value otherwise (a part of a
// reassembled message may start anywhere).
type fixedRoute[T any] struct {
	// What the hot path reads, copied here from f: no pointer to chase.
	size      int
	alignMask uintptr
	plain     bool // no bool field to check
	h         func(*T) error
	f         *Fixed[T]
	scratch   T
}

func newFixedRoute[T any](f *Fixed[T], h func(*T) error) *fixedRoute[T] {
	return &fixedRoute[T]{size: f.size, alignMask: f.align - 1, plain: len(f.bools) == 0, h: h, f: f}
}

func (x *fixedRoute[T]) deliver(r *Router, m *mailbox.Message) error {
	p := m.Payload()
	if m.NumParts() == 1 && len(p) == x.size && x.plain && x.size > 0 &&
		uintptr(unsafe.Pointer(unsafe.SliceData(p)))&x.alignMask == 0 {
		// The common case: one aligned part of the right length, nothing
		// to check: a view of the ring.
		r.stats.Delivered++
		err := x.h((*T)(unsafe.Pointer(unsafe.SliceData(p))))
		if err != nil {
			r.stats.Failed++
		}
		return err
	}
	return x.slow(r, m)
}

// slow is deliver for everything but the common case: several parts, a
// wrong length, bools to check, a payload not aligned for T, an empty T.
func (x *fixedRoute[T]) slow(r *Router, m *mailbox.Message) error {
	f := x.f
	if m.NumParts() != 1 {
		r.stats.Undecodable++
		return errParts(f.id, m.NumParts())
	}
	p := m.Payload()
	if err := f.check(p); err != nil {
		r.stats.Undecodable++
		return err
	}
	v := f.view(p)
	if v == nil {
		copy(bytesOf(&x.scratch, f.size), p)
		v = &x.scratch
	}
	return r.delivered(x.h(v))
}

// codecRoute decodes into the route's own value.
type codecRoute[T any] struct {
	c       Codec[T]
	id      int32
	h       func(*T) error
	scratch T
}

func (x *codecRoute[T]) deliver(r *Router, m *mailbox.Message) error {
	if m.NumParts() != 1 {
		r.stats.Undecodable++
		return errParts(x.id, m.NumParts())
	}
	if err := x.c.Decode(m.Payload(), &x.scratch); err != nil {
		r.stats.Undecodable++
		return fmt.Errorf("message: type %d: %w", x.id, err)
	}
	return r.delivered(x.h(&x.scratch))
}

func (r *Router) delivered(err error) error {
	r.stats.Delivered++
	if err != nil {
		r.stats.Failed++
	}
	return err
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

// Receive routes one message (mailbox.Receiver). It always consumes the
// message: a failure is reported, not retried.
func (r *Router) Receive(m *mailbox.Message) (mailbox.Action, error) {
	if id := m.TypeID(); uint32(id) < denseRoutes {
		if rt := r.dense[id]; rt != nil {
			return mailbox.Continue, rt.deliver(r, m)
		}
	} else if rt := r.sparse[id]; rt != nil {
		return mailbox.Continue, rt.deliver(r, m)
	}
	if r.fallback != nil {
		return mailbox.Continue, r.fallback(m)
	}
	r.stats.NoRoute++
	return mailbox.Continue, errNoRoute(m.TypeID())
}

// Stats returns the router's counts. Same goroutine as Receive.
func (r *Router) Stats() RouterStats { return r.stats }

func errParts(typeID int32, n int) error {
	return fmt.Errorf("%w: type %d: a message of %d parts, want 1", ErrLength, typeID, n)
}

func errNoRoute(typeID int32) error { return fmt.Errorf("%w: %d", ErrNoRoute, typeID) }
