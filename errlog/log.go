package errlog

import (
	"hash/maphash"
	"math"
	"runtime"
	"sync"

	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/internal/atomicbuf"
)

// Log is Agrona's DistinctErrorLog: it records each distinct error once in
// a caller-supplied buffer (usually a section of a shared file), with an
// observation count and the times of the first and last observation, so
// that a storm of the same error neither fills the buffer nor hides other
// errors, and the log outlives a crash and can be read by another process
// (Read).
//
// A Log is safe for concurrent use. There must be one Log per buffer,
// across all processes: two writers would append over each other.
type Log struct {
	buf   atomicbuf.Buffer
	clock clock.Clock
	seed  maphash.Seed

	mu      sync.Mutex
	next    int // offset of the next record
	byHash  map[uint64]*observation
	scratch []byte // normalised stacks, under mu
	encoded []byte // a new record's text, under mu
}

// maxRetained is the largest scratch buffer (scratch, encoded) a Log keeps
// between calls: one large error must not pin its size in memory for the
// Log's lifetime.
const maxRetained = 64 << 10

// Option configures a Log.
type Option func(*Log)

// WithClock sets the clock that timestamps observations with its wall
// clock (EpochMillis: the unit of the record's timestamps, shared with
// other processes). The default is clock.System. Tests inject a
// clock.Manual; an agent may pass a cached clock it updates once per duty
// cycle.
func WithClock(c clock.Clock) Option {
	return func(l *Log) {
		if c != nil {
			l.clock = c
		}
	}
}

// New returns a Log over buf. buf's first byte must be 8-byte aligned
// (an error otherwise, never a panic); heap allocations of 8 bytes or more and
// mapped files are.
//
// New never writes to buf. A fresh buffer is zero: the empty log. If buf
// already holds records (a log left by a previous writer, in a file that
// outlived it), New keeps them and the Log appends after them; an error
// recorded again then gets a new record, since the identities of the old
// ones are not in this process's memory. A buffer whose records are not a
// well-formed log gives an error wrapping ErrCorrupt.
func New(buf []byte, opts ...Option) (*Log, error) {
	b, err := wrap(buf)
	if err != nil {
		return nil, err
	}
	l := &Log{
		buf:    b,
		clock:  clock.System,
		seed:   maphash.MakeSeed(),
		byHash: map[uint64]*observation{},
	}
	for _, o := range opts {
		o(l)
	}
	if l.next, err = walk(b, func(int, int) {}); err != nil {
		return nil, err
	}
	return l, nil
}

// Record records an observation of err and reports whether it is in the
// log: true if an equal observation was already there (its count and last
// time updated) or a new record was appended; false if the new record did
// not fit, in which case the caller should report err some other way
// (Handler does). A nil err records nothing and returns true. Observations
// are equal as the package documentation defines it (types, messages and
// stacks, and the stack at the Record call). Safe for concurrent use;
// recording an error already in the log allocates nothing when its Error
// methods do not.
func (l *Log) Record(err error) bool {
	if err == nil {
		return true
	}
	return l.record(err, 1)
}

// record is Record for a caller skip frames above record's caller.
func (l *Log) record(err error, skip int) bool {
	now := l.clock.EpochMillis()
	var k key
	k.npc = runtime.Callers(skip+2, k.pcs[:])
	k.describe(err)
	h := k.hash(l.seed)

	l.mu.Lock()
	var found *observation
	for o := l.byHash[h]; o != nil; o = o.next {
		var eq bool
		if eq, l.scratch = o.equal(&k, l.scratch); eq {
			found = o
			break
		}
	}
	if cap(l.scratch) > maxRetained {
		l.scratch = nil
	}
	if found == nil {
		ok := l.append(h, &k, now)
		l.mu.Unlock()
		return ok
	}
	l.mu.Unlock()
	l.observe(found.offset, now)
	return true
}

// append writes a new record for k, observed once at now: text, count 1,
// both timestamps, a zero length word after the record, and last, with a
// release store, the record's length, which publishes it. It reports false
// when the record does not fit. Called under mu.
func (l *Log) append(h uint64, k *key, now int64) bool {
	capacity := l.buf.Len()
	if l.next > capacity-headerLength {
		return false
	}
	room := min(maxRecordLength, capacity-l.next) - headerLength
	text, fits := encode(l.encoded[:0], k, room)
	l.encoded = text
	if cap(text) > maxRetained {
		l.encoded = nil // text stays valid for this call
	}
	if !fits {
		return false
	}
	off := l.next
	length := headerLength + len(text)
	copy(l.buf.Bytes()[off+encodedErrorOffset:], text)
	l.buf.Int32At(off + observationCountOffset).Store(1)
	l.buf.Int64At(off + firstObservationTimestampOffset).Store(now)
	l.buf.Int64At(off + lastObservationTimestampOffset).Store(now)
	end := off + alignRecord(length)
	// A buffer left by a writer that died mid-record may hold text where
	// the next length word goes: zero it before publishing, so that a
	// reader always finds the end of the log after the last record.
	if end <= capacity-headerLength {
		l.buf.Int32At(end + lengthOffset).Store(0)
	}
	atomicbuf.StoreRelease32(l.buf.Int32At(off+lengthOffset), int32(length))
	l.next = end

	o := newObservation(off, k)
	o.next = l.byHash[h]
	l.byHash[h] = o
	return true
}

// observe counts one more observation of the record at off and moves its
// last time forward to now. Both are compare-and-swap loops rather than
// Agrona's add and store: the count stops at MaxInt32 instead of wrapping
// negative, and the last time never moves backwards when recorders race.
func (l *Log) observe(off int, now int64) {
	count := l.buf.Int32At(off + observationCountOffset)
	for {
		c := count.Load()
		if c == math.MaxInt32 || count.CompareAndSwap(c, c+1) {
			break
		}
	}
	last := l.buf.Int64At(off + lastObservationTimestampOffset)
	for {
		t := last.Load()
		if t >= now || last.CompareAndSwap(t, now) {
			break
		}
	}
}
