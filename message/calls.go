package message

import (
	"errors"

	"github.com/dutyrt/duty/timer"
)

// Calls correlates the requests an agent sends with their replies, by an
// id the request carries and the reply returns, and times them out on a
// timer wheel of its own that the agent polls from its duty cycle: no
// goroutine, no blocking, no allocation once its maps have grown to the
// number of calls in flight. T is what the agent keeps per call (what to
// do with the reply). A Calls belongs to one agent's goroutine.
//
//	id, err := calls.Begin(now+timeout, order)    // before sending the request with id
//	...
//	if order, ok := calls.End(reply.ID); ok { ... } // on the reply: false for a late one
//	n := calls.Poll(now)                            // in DoWork: expired calls go to the handler
type Calls[T any] struct {
	wheel   *timer.Wheel
	next    uint64
	pending map[uint64]pendingCall[T]
	byTimer map[int64]uint64
	expired func(id uint64, v T)
	onTimer timer.Handler // bound once: Poll passes it without allocating
}

type pendingCall[T any] struct {
	timer int64
	v     T
}

// NewCalls returns a Calls whose wheel has cfg (times in the unit the
// agent reads its clock in: nanoseconds of a cached clock, typically) and
// which hands every call that times out to expired, from Poll.
func NewCalls[T any](cfg timer.Config, expired func(id uint64, v T)) (*Calls[T], error) {
	if expired == nil {
		return nil, errors.New("message: nil expiry handler")
	}
	w, err := timer.NewWheel(cfg)
	if err != nil {
		return nil, err
	}
	c := &Calls[T]{
		wheel:   w,
		pending: make(map[uint64]pendingCall[T]),
		byTimer: make(map[int64]uint64),
		expired: expired,
	}
	c.onTimer = c.expire
	return c, nil
}

// Begin starts a call that times out at deadline, keeping v for it, and
// returns the id its request must carry (never 0, so that a zero id can
// mean "no reply wanted"). An error is the wheel's (timer.ErrCapacity).
func (c *Calls[T]) Begin(deadline int64, v T) (uint64, error) {
	t, err := c.wheel.Schedule(deadline)
	if err != nil {
		return 0, err
	}
	c.next++
	id := c.next
	c.pending[id] = pendingCall[T]{timer: t, v: v}
	c.byTimer[t] = id
	return id, nil
}

// End completes call id when its reply arrives and returns what Begin
// kept. It returns false for an id that is not pending: the call timed out
// already (a late reply), was ended before, or was never begun.
func (c *Calls[T]) End(id uint64) (T, bool) {
	p, ok := c.pending[id]
	if !ok {
		var zero T
		return zero, false
	}
	delete(c.pending, id)
	delete(c.byTimer, p.timer)
	c.wheel.Cancel(p.timer)
	return p.v, true
}

// Poll times out the calls whose deadline is before now, handing each to
// the expiry handler, and returns how many: count it as work in DoWork.
func (c *Calls[T]) Poll(now int64) int {
	return c.wheel.Poll(now, c.onTimer, len(c.pending)+1)
}

func (c *Calls[T]) expire(_, t int64) bool {
	id, ok := c.byTimer[t]
	if !ok {
		return true
	}
	p := c.pending[id]
	delete(c.pending, id)
	delete(c.byTimer, t)
	c.expired(id, p.v)
	return true
}

// Pending returns the number of calls in flight.
func (c *Calls[T]) Pending() int { return len(c.pending) }
