package mailbox

import (
	"sync"

	"github.com/dutyrt/duty/ringbuf"
)

// ringViews holds each mailbox's ring view, so that a test's claims and
// commits go through one view.
var ringViews sync.Map // *Mailbox -> *ringbuf.ManyToOne

// RingOf returns a ringbuf view of m's ring (one per mailbox): a second
// view of the same memory, for tests that read its positions or write
// records the mailbox's API would not (junk, reserved type bits,
// half-made batches).
func RingOf(m *Mailbox) *ringbuf.ManyToOne {
	if r, ok := ringViews.Load(m); ok {
		return r.(*ringbuf.ManyToOne)
	}
	r, err := ringbuf.NewManyToOne(m.buf)
	if err != nil {
		panic(err)
	}
	v, _ := ringViews.LoadOrStore(m, r)
	return v.(*ringbuf.ManyToOne)
}

// checkClaimsEveryDrain makes m's consumer look at the head for an open
// claim on every idle drain, not once in claimCheckPeriod, so that a test
// times a stall with a few drains (TestStallCheckPeriod covers the
// periods).
func checkClaimsEveryDrain(m *Mailbox) { m.cons.claimMask = 0 }

// DrainLimit is an actor's default drain limit, for the benchmarks.
const DrainLimit = defaultDrainLimit
