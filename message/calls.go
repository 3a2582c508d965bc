package message

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"
	"unsafe"

	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/timer"
)

// RequestHeader is the first field of a request type (embed it): the call
// id and the address of the caller's mailbox, which Calls.Ask fills in and
// Fixed.Reply answers to.
type RequestHeader struct {
	CallID  uint64  // the caller's id for the call; its reply carries it back
	ReplyTo Address // the caller's mailbox
}

// ReplyHeader is the first field of a reply type (embed it): the call id
// of the request it answers, which Fixed.Reply fills in.
type ReplyHeader struct {
	CallID uint64
}

// Errors of a call.
var (
	// ErrTimeout is the error Calls hands a call's done function when no
	// reply arrived before its deadline.
	ErrTimeout = errors.New("message: call timed out")
	// errTooManyCalls is Ask's refusal when the calls in flight are at
	// their limit (WithMaxInFlight). It wraps mailbox.ErrBackPressured:
	// like a full mailbox, it means "ask again in a later cycle", and a
	// handler that returns it leaves its message for the next drain.
	errTooManyCalls = fmt.Errorf("message: too many calls in flight: %w", mailbox.ErrBackPressured)
)

// Defaults of NewCalls.
const (
	defaultCallTimeout = 5 * time.Second
	defaultMaxInFlight = 1024
	// callResolution is the timer wheel's tick (about a millisecond): a
	// call times out at most a tick and a Poll after its deadline.
	callResolution = 1 << 20
	callTicks      = 512
)

// CallOption configures NewCalls.
type CallOption func(*callConfig)

type callConfig struct {
	timeout time.Duration
	max     int
	clock   clock.Nano
}

// WithTimeout sets how long a call waits for its reply (default five
// seconds).
func WithTimeout(d time.Duration) CallOption { return func(c *callConfig) { c.timeout = d } }

// WithMaxInFlight bounds the calls in flight (default 1024): Ask refuses
// more with an error wrapping mailbox.ErrBackPressured. Keep the replies of that many
// calls within the caller's mailbox capacity, and a server back-pressured
// by this caller never waits long (docs/message.md, "Back-pressure").
func WithMaxInFlight(n int) CallOption { return func(c *callConfig) { c.max = n } }

// WithClock sets the clock deadlines are read from (default clock.System;
// a cached clock saves the system call per Ask and Poll).
func WithClock(c clock.Nano) CallOption { return func(cfg *callConfig) { cfg.clock = c } }

// Calls is a caller's side of request/reply, from its duty cycle: Ask
// sends a request with a deadline, the reply comes back through the
// caller's own mailbox and router, and Poll, called from DoWork, times out
// the calls whose deadline passed. Each call ends exactly once, in done:
// with its reply, or with ErrTimeout. No goroutine waits and nothing
// allocates per call once its tables have grown to the calls in flight.
//
//	calls, err := message.NewCalls(router, Adds, Sums, self, func(i int, s *Sum, err error) { ... })
//	err = calls.Ask(adder, &Add{A: 1, B: 2}, i) // in DoWork; ErrBackPressured: ask again later
//	n := calls.Poll()                           // in DoWork: timed out calls go to done
//
// Req and Rep are Fixed layouts whose first field is a RequestHeader and a
// ReplyHeader; S is what the caller keeps per call. A Calls belongs to the
// goroutine that drains its router's mailbox.
type Calls[Req, Rep, S any] struct {
	requests *Fixed[Req]
	self     Address
	done     func(state S, reply *Rep, err error)
	clock    clock.Nano
	timeout  int64
	max      int
	wheel    *timer.Wheel
	next     uint64
	pending  map[uint64]pendingCall[S]
	byTimer  map[int64]uint64
	onTimer  timer.Handler // bound once: Poll passes it without allocating
	stats    CallStats
}

type pendingCall[S any] struct {
	timer int64
	state S
}

// CallStats counts what a Calls did. Same goroutine as the Calls.
type CallStats struct {
	Asked    int64 // requests sent
	Replied  int64 // calls ended by their reply
	TimedOut int64 // calls ended by ErrTimeout
	Late     int64 // replies to no call in flight: after its timeout, or never asked
}

// NewCalls returns the Calls of a caller whose mailbox is at address self
// and drains into r: it routes replies' type id on r to itself, and calls
// done once per call, from the drain (with the reply, valid only during
// the call) or from Poll (with ErrTimeout and a nil reply). An error wraps
// ErrLayout when requests' type does not start with a RequestHeader or
// replies' with a ReplyHeader, ErrAddress for a zero self, or is Handle's.
func NewCalls[Req, Rep, S any](r *Router, requests *Fixed[Req], replies *Fixed[Rep], self Address,
	done func(state S, reply *Rep, err error), opts ...CallOption) (*Calls[Req, Rep, S], error) {
	cfg := callConfig{timeout: defaultCallTimeout, max: defaultMaxInFlight, clock: clock.System}
	for _, o := range opts {
		o(&cfg)
	}
	switch {
	case done == nil:
		return nil, errors.New("message: nil done function")
	case self == Address{}:
		return nil, fmt.Errorf("%w: zero reply address", ErrAddress)
	case !startsWith[RequestHeader](requests.typ):
		return nil, fmt.Errorf("%w: %s: a request type starts with a message.RequestHeader", ErrLayout, requests.typ)
	case !startsWith[ReplyHeader](replies.typ):
		return nil, fmt.Errorf("%w: %s: a reply type starts with a message.ReplyHeader", ErrLayout, replies.typ)
	case cfg.timeout <= 0 || cfg.max < 1 || cfg.clock == nil:
		return nil, fmt.Errorf("message: calls: timeout %s, max in flight %d", cfg.timeout, cfg.max)
	}
	w, err := timer.NewWheel(timer.Config{Start: cfg.clock.Nanos(), Resolution: callResolution, TicksPerWheel: callTicks})
	if err != nil {
		return nil, err
	}
	c := &Calls[Req, Rep, S]{
		requests: requests, self: self, done: done, clock: cfg.clock,
		timeout: int64(cfg.timeout), max: cfg.max, wheel: w,
		// Ids start at the wall clock's nanoseconds, so that a caller that
		// restarts under the same address does not take a reply to its
		// previous run's call for one of its own.
		next:    uint64(time.Now().UnixNano()),
		pending: make(map[uint64]pendingCall[S]),
		byTimer: make(map[int64]uint64),
	}
	c.onTimer = c.expire
	if err := Handle(r, replies, c.reply); err != nil {
		return nil, err
	}
	return c, nil
}

// startsWith reports whether t is a struct whose first field is an H.
func startsWith[H any](t reflect.Type) bool {
	return t.Kind() == reflect.Struct && t.NumField() > 0 &&
		t.Field(0).Offset == 0 && t.Field(0).Type == reflect.TypeFor[H]()
}

// Ask sends *req to mailbox to as a call that ends in done with state:
// it fills req's RequestHeader (a new call id, the caller's address) and
// starts the call's deadline. Nothing is in flight when Ask returns an
// error: an error wrapping mailbox.ErrBackPressured (to is full, or
// too many calls in flight) means "ask again in a later cycle"; others are the
// send's (mailbox.ErrClosed, mailbox.ErrConsumerDead) or the timer
// wheel's.
func (c *Calls[Req, Rep, S]) Ask(to *mailbox.Mailbox, req *Req, state S) error {
	if len(c.pending) >= c.max {
		return errTooManyCalls
	}
	t, err := c.wheel.Schedule(c.clock.Nanos() + c.timeout)
	if err != nil {
		return err
	}
	c.next++
	id := c.next
	h := (*RequestHeader)(unsafe.Pointer(req)) // the first field (NewCalls checked)
	h.CallID, h.ReplyTo = id, c.self
	if err := c.requests.Send(to, req); err != nil {
		c.wheel.Cancel(t)
		return err
	}
	c.pending[id] = pendingCall[S]{timer: t, state: state}
	c.byTimer[t] = id
	c.stats.Asked++
	return nil
}

// reply is the route of replies: it ends the call the reply names, or
// counts a reply to no call in flight (Late).
func (c *Calls[Req, Rep, S]) reply(rep *Rep) error {
	id := (*ReplyHeader)(unsafe.Pointer(rep)).CallID
	p, ok := c.pending[id]
	if !ok {
		c.stats.Late++
		return nil
	}
	delete(c.pending, id)
	delete(c.byTimer, p.timer)
	c.wheel.Cancel(p.timer)
	c.stats.Replied++
	c.done(p.state, rep, nil)
	return nil
}

// Poll ends with ErrTimeout the calls whose deadline has passed, reading
// the clock, and returns how many: call it from DoWork and count it as
// work. A call times out no earlier than its deadline, and up to a
// millisecond after it (the wheel's tick) plus the time to the next Poll.
func (c *Calls[Req, Rep, S]) Poll() int {
	return c.wheel.Poll(c.clock.Nanos(), c.onTimer, len(c.pending)+1)
}

func (c *Calls[Req, Rep, S]) expire(_, t int64) bool {
	id, ok := c.byTimer[t]
	if !ok {
		return true
	}
	p := c.pending[id]
	delete(c.pending, id)
	delete(c.byTimer, t)
	c.stats.TimedOut++
	c.done(p.state, nil, ErrTimeout)
	return true
}

// Pending returns the number of calls in flight.
func (c *Calls[Req, Rep, S]) Pending() int { return len(c.pending) }

// Stats returns the calls' counts.
func (c *Calls[Req, Rep, S]) Stats() CallStats { return c.stats }

// Reply sends *v, a reply to the request whose header is req, to the
// requester's mailbox, resolved by reg: it fills v's ReplyHeader with the
// request's call id. Return its error from the request's handler: a full
// mailbox (mailbox.ErrBackPressured) then leaves the request for the next
// drain, which replies again, so no reply is lost to back-pressure. Other
// errors: reg's (ErrUnknownAddress), the send's (mailbox.ErrConsumerDead,
// mailbox.ErrClosed), or ErrLayout when T does not start with a
// ReplyHeader. The lookup does not wait: give the replying side a
// Directory that does not wait for files.
func (f *Fixed[T]) Reply(reg *Registry, req RequestHeader, v *T) error {
	if !f.replyHeader {
		return fmt.Errorf("%w: %s: a reply type starts with a message.ReplyHeader", ErrLayout, f.typ)
	}
	to, err := reg.Lookup(context.Background(), req.ReplyTo)
	if err != nil {
		return err
	}
	(*ReplyHeader)(unsafe.Pointer(v)).CallID = req.CallID
	return f.Send(to, v)
}
