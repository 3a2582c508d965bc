package counters

import (
	"sync/atomic"

	"github.com/dutyrt/duty/internal/atomicbuf"
)

// Counter is one allocated counter: the value word of its value record,
// with the id and registration id it was allocated under. It is Agrona's
// AtomicCounter (and, through Word, its StatusIndicator and Position).
//
// Any number of goroutines (and processes mapping the regions) may call
// Get, Add and Set concurrently. AddSingleWriter and
// ProposeMax are a load followed by a store: correct only when one goroutine
// is the counter's only writer. None of these allocate or take a lock.
//
// After Close the id may be reused by another counter: a Counter must not be
// used after Close, and nothing checks it on the hot path.
type Counter struct {
	word   *atomic.Int64
	id     int
	regID  int64
	m      *Manager
	closed atomic.Bool
}

// ID returns the counter id: the index of its records.
func (c *Counter) ID() int { return c.id }

// RegistrationID returns the registration id the counter was allocated
// under. A reader that finds another registration id at ID has found a
// different counter reusing the slot.
func (c *Counter) RegistrationID() int64 { return c.regID }

// Word returns the counter's value word in the values region, for code that
// keeps a bare *atomic.Int64 (an idle.Controllable's status word, a
// runner's live statistics, a mailbox statistic). Its ordering guarantees are
// those of sync/atomic; it is valid until Close.
func (c *Counter) Word() *atomic.Int64 { return c.word }

// Get loads the value (an atomic load: it observes every store that
// happened before the store it reads).
func (c *Counter) Get() int64 { return c.word.Load() }

// Set stores v with release semantics (atomicbuf.StoreRelease64): writes the
// caller made before Set are visible to whoever loads v. It is not a full
// fence; use Word().Store for a sequentially consistent store.
func (c *Counter) Set(v int64) { atomicbuf.StoreRelease64(c.word, v) }

// SetWord stores v into w with release semantics, as Set does: for a
// counter's word held as a *atomic.Int64 (Word), or any word with a single
// writer that readers load atomically.
func SetWord(w *atomic.Int64, v int64) { atomicbuf.StoreRelease64(w, v) }

// Add atomically adds delta and returns the new value (Agrona's getAndAdd,
// increment with delta 1). Safe for any number of concurrent writers.
func (c *Counter) Add(delta int64) int64 { return c.word.Add(delta) }

// AddSingleWriter adds delta with a load and a release store, cheaper than
// Add's locked instruction; only for a counter with one writer (Agrona's
// getAndAddRelease, incrementRelease with delta 1). Returns the new value.
func (c *Counter) AddSingleWriter(delta int64) int64 {
	v := c.word.Load() + delta
	atomicbuf.StoreRelease64(c.word, v)
	return v
}

// ProposeMax stores v with release semantics if it is greater than the
// current value and reports whether it did. Single writer only (Agrona's
// proposeMaxRelease): used for positions and high-water marks.
func (c *Counter) ProposeMax(v int64) bool {
	if v > c.word.Load() {
		atomicbuf.StoreRelease64(c.word, v)
		return true
	}
	return false
}

// typeID returns the type id the counter was allocated with.
func (c *Counter) typeID() int32 { return c.m.typeID(c.id) }

// label returns the counter's label.
func (c *Counter) label() string {
	var buf [maxLabelLength]byte
	n, err := c.m.labelLength(c.id)
	if err != nil {
		return "" // only a foreign writer can corrupt an allocated record
	}
	loadWords(c.m.meta, metadataOffset(c.id)+labelOffset, buf[:n])
	return string(buf[:n])
}

// ownerID returns the owner id in the value record.
func (c *Counter) ownerID() int64 { return c.m.ownerID(c.id) }

// setOwnerID stores the owner id (for example the id of the client or
// process the counter belongs to, for clean-up when it goes).
func (c *Counter) setOwnerID(v int64) {
	atomicbuf.StoreRelease64(c.m.vals.Int64At(valueOffset(c.id)+ownerIDOffset), v)
}

// referenceID returns the reference id in the value record.
func (c *Counter) referenceID() int64 { return c.m.referenceID(c.id) }

// setReferenceID stores the reference id (the registration id of something
// the counter is linked to, such as a mailbox or publication).
func (c *Counter) setReferenceID(v int64) {
	atomicbuf.StoreRelease64(c.m.vals.Int64At(valueOffset(c.id)+referenceIDOffset), v)
}

// Close frees the counter's id through its manager, once: later calls
// return nil and do nothing. If another writer freed the id (and maybe
// reused it) in the meantime, Close frees nothing and returns an error
// wrapping ErrCorrupt.
func (c *Counter) Close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return nil
	}
	return c.m.freeCounter(c)
}

// isClosed reports whether Close was called.
func (c *Counter) isClosed() bool { return c.closed.Load() }
