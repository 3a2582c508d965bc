package mailbox

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/dutyrt/duty/internal/ringfast"
	"github.com/dutyrt/duty/ringbuf"
)

// DefaultCapacity is the ring capacity of a mailbox that allocates its own
// ring: 64 KiB of records.
const DefaultCapacity = 64 * 1024

// DefaultUnblockTimeout is how long the consumer position may stay still,
// with a claim open at the head of the ring, before Drain releases the claim
// as abandoned (see Config.UnblockTimeout).
const DefaultUnblockTimeout = 5 * time.Second

// DefaultMaxParts is the default limit on the parts of one message.
const DefaultMaxParts = 1024

// Values of the state word (Config.State). A word shared between
// processes holds them; they only ever increase.
const (
	StateOpen          int64 = 0 // sends accepted
	StateClosedDrain   int64 = 1 // closed; what is queued is delivered
	StateClosedDiscard int64 = 2 // closed; what is queued is discarded and counted
)

const (
	stateOpen    = StateOpen
	stateDrain   = StateClosedDrain
	stateDiscard = StateClosedDiscard
)

// Config configures a Mailbox. The zero value is a mailbox with its own
// 64 KiB ring.
type Config struct {
	// Name names the mailbox in statistics and errors.
	Name string
	// Ring is a many-to-one ring to use, for example one that lives in a
	// file shared with other processes (package ipc). When nil, the mailbox
	// allocates a ring of Capacity bytes. New never writes to it.
	Ring *ringbuf.ManyToOne
	// Capacity is the record capacity of an allocated ring: a power of two,
	// at least MinCapacity. Default DefaultCapacity. Ignored when Ring is
	// set (whose capacity must also be at least MinCapacity).
	Capacity int
	// MaxMessageSize bounds the body of a message: the payload of a
	// one-part message, or the sum of the part lengths plus
	// PartLengthPrefix bytes per part of a multipart message. Default and
	// upper bound: what fits in a batch of half the ring's capacity
	// (Mailbox.MaxMessageSize reports it). Senders get ErrTooLong above it;
	// a receiver drops (and counts as corrupt) framed messages above its
	// own limit, so processes sharing a ring should agree on it.
	MaxMessageSize int
	// MaxParts bounds the parts of a multipart message. Default
	// DefaultMaxParts.
	MaxParts int
	// UnblockTimeout is how long Drain waits, without progress while a
	// claim is open at the head of the ring, before it calls the ring's
	// Unblock and counts the released claim as torn (a sender that died or
	// hung between claim and commit). Default DefaultUnblockTimeout. A
	// sender that is merely slower than this would write into space the
	// consumer has passed: keep it far above any scheduling delay.
	UnblockTimeout time.Duration
	// Clock returns a monotonic time in nanoseconds for the liveness check.
	// Default: the runtime's monotonic clock. Tests inject their own.
	Clock func() int64
	// State is the word holding the open/closed state (StateOpen,
	// StateClosedDrain, StateClosedDiscard). Default: the mailbox's own.
	// Package ipc places it in a shared file header, so that senders in
	// other processes see a close. New never writes it.
	State *atomic.Int64
	// Counters lets the caller place the statistics counters (for example
	// in shared memory). Nil fields get the mailbox's own padded counters.
	Counters Counters
	// NoDemote turns off the ring's demotion of the lines its consumer
	// releases (ringbuf.ManyToOne.SetDemote; docs/ringbuf.md, "Demoting
	// released lines"), in the ring New allocates or is given. Demotion
	// pays where senders publish a message per claim and the owner keeps
	// up; turn it off for a mailbox whose owner is the slower end, or
	// where only the latency of single messages counts (W3's mailbox
	// ping-pong: 11-17 ns more at p50 with it).
	NoDemote bool
}

// Counters are the statistics words of a mailbox. Senders add to
// BackPressured and RefusedClosed; the draining goroutine writes the rest
// (MaxDepth, Delivered and Discarded with plain release stores of totals it
// keeps, starting from the values the words hold when New runs; Torn and
// Corrupt with atomic adds). Every access is atomic.
type Counters struct {
	// BackPressured counts sends that found the mailbox full: each Send,
	// SendParts, Claim or ClaimParts that returned ErrBackPressured, and
	// each SendContext that had to wait.
	BackPressured *atomic.Int64
	// RefusedClosed counts sends refused with ErrClosed.
	RefusedClosed *atomic.Int64
	// MaxDepth is the largest backlog Drain has seen, in bytes (headers
	// and padding included): the bytes one Drain consumed, or, for a Drain
	// that stopped at its limit, the bytes from where it started to the
	// tail. The consumer writes it.
	MaxDepth *atomic.Int64
	// Delivered counts messages handed to a handler and consumed (an
	// aborted delivery is not counted until it is consumed). Those of a
	// Drain whose handler panicked, the panicking message included (the
	// ring consumes it), are counted by the next Drain.
	Delivered *atomic.Int64
	// Torn counts claims released by the liveness check: messages whose
	// sender died (or hung) between claim and commit, dropped whole.
	Torn *atomic.Int64
	// Corrupt counts records dropped because their framing is invalid.
	Corrupt *atomic.Int64
	// Discarded counts messages consumed without delivery after
	// Close(Discard).
	Discarded *atomic.Int64
}

const numCounters = 7

// ownCounters is the storage of counters the caller did not place: each on
// its own 128-byte slot (two cache lines, as the ring's trailer), so that a
// sender bumping BackPressured does not slow the consumer's counters.
type ownCounters struct {
	_ [128]byte
	c [numCounters]struct {
		v atomic.Int64
		_ [120]byte
	}
}

// ownState is the state word of a mailbox not given one, alone in its
// 128-byte slot: every send reads it, so a neighbour written often (a tiny
// allocation can share its 16 bytes with anything) would make every send a
// cache miss.
type ownState struct {
	_ [128]byte
	v atomic.Int64
	_ [120]byte
}

// Mailbox is a bounded many-to-one mailbox over an Agrona-layout ring: any
// number of goroutines (or processes sharing the ring) send, one goroutine
// drains. See the package documentation for the contract.
type Mailbox struct {
	_ noCopy
	// Padding on both sides keeps the senders' read-only lines away from
	// whatever the allocator puts next to the mailbox.
	_ [128]byte

	// Read-only after New, shared by senders and the consumer.
	name     string
	ring     *ringbuf.ManyToOne
	fast     *ringfast.Producer // the ring's fast path (Send runs it in line); nil if plainMax < ringfast.MaxPayload
	plainMax int                // the largest plain message: min(one record, MaxMessageSize)
	base     unsafe.Pointer     // start of the ring's buffer
	capacity int
	lay      layout
	maxParts int
	state    *atomic.Int64
	ctr      Counters
	own      *ownCounters
	timeout  int64
	clock    func() int64

	// The consumer's state, on its own cache lines.
	_    [128]byte
	cons consumer
	_    [128]byte
}

// noCopy makes go vet report copies of a Mailbox.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// New returns a mailbox configured by cfg.
func New(cfg Config) (*Mailbox, error) {
	r := cfg.Ring
	if r == nil {
		capacity := cfg.Capacity
		if capacity == 0 {
			capacity = DefaultCapacity
		}
		if capacity < MinCapacity || capacity&(capacity-1) != 0 || capacity > math.MaxInt32 {
			return nil, fmt.Errorf("%w: capacity %d is not a power of two >= %d", ErrConfig, capacity, MinCapacity)
		}
		buf, err := ringbuf.Allocate(capacity)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		if r, err = ringbuf.NewManyToOne(buf); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
	} else if r.Capacity() < MinCapacity {
		return nil, fmt.Errorf("%w: ring capacity %d < %d", ErrConfig, r.Capacity(), MinCapacity)
	}
	if cfg.NoDemote {
		r.SetDemote(false) // the consumer's view only: nothing in the ring changes
	}
	if cfg.MaxMessageSize < 0 || cfg.MaxParts < 0 || cfg.UnblockTimeout < 0 {
		return nil, fmt.Errorf("%w: negative MaxMessageSize %d, MaxParts %d or UnblockTimeout %v",
			ErrConfig, cfg.MaxMessageSize, cfg.MaxParts, cfg.UnblockTimeout)
	}
	lay := newLayout(r.Capacity(), r.MaxMessageLength(), 0)
	if cfg.MaxMessageSize > lay.maxMessage {
		return nil, fmt.Errorf("%w: MaxMessageSize %d exceeds %d, the most a batch of half the ring carries",
			ErrConfig, cfg.MaxMessageSize, lay.maxMessage)
	}
	lay = newLayout(r.Capacity(), r.MaxMessageLength(), cfg.MaxMessageSize)
	m := &Mailbox{
		name:     cfg.Name,
		ring:     r,
		fast:     ringfast.Of(r),
		base:     unsafe.Pointer(unsafe.SliceData(r.Buffer())),
		capacity: r.Capacity(),
		lay:      lay,
		plainMax: min(lay.maxRecord, lay.maxMessage),
		maxParts: cfg.MaxParts,
		state:    cfg.State,
		ctr:      cfg.Counters,
		timeout:  int64(cfg.UnblockTimeout),
		clock:    cfg.Clock,
	}
	if m.maxParts == 0 {
		m.maxParts = DefaultMaxParts
	}
	if m.timeout == 0 {
		m.timeout = int64(DefaultUnblockTimeout)
	}
	if m.clock == nil {
		start := time.Now()
		m.clock = func() int64 { return int64(time.Since(start)) }
	}
	if m.state == nil {
		m.state = &new(ownState).v
	}
	slots := []**atomic.Int64{&m.ctr.BackPressured, &m.ctr.RefusedClosed, &m.ctr.MaxDepth,
		&m.ctr.Delivered, &m.ctr.Torn, &m.ctr.Corrupt, &m.ctr.Discarded}
	for i, p := range slots {
		if *p == nil {
			if m.own == nil {
				m.own = new(ownCounters)
			}
			*p = &m.own.c[i].v
		}
	}
	if m.plainMax < ringfast.MaxPayload {
		// Send's fast path takes up to ringfast.MaxPayload bytes without
		// looking at MaxMessageSize: off for a limit below that.
		m.fast = nil
	}
	m.cons.init(m)
	return m, nil
}

// Name returns the mailbox's name.
func (m *Mailbox) Name() string { return m.name }

// Ring returns the ring under the mailbox.
func (m *Mailbox) Ring() *ringbuf.ManyToOne { return m.ring }

// MaxMessageSize returns the largest message body Send and SendParts
// accept (see Config.MaxMessageSize).
func (m *Mailbox) MaxMessageSize() int { return m.lay.maxMessage }

// MaxClaimLength returns the largest payload sent as one plain record: the
// most Claim accepts, and the largest Send that is not fragmented. It is
// one record's payload, or MaxMessageSize if that is smaller.
func (m *Mailbox) MaxClaimLength() int { return m.plainMax }

// MaxPartsClaimLength returns the largest body ClaimParts accepts: the
// sum of the part lengths plus PartLengthPrefix bytes per part must fit in
// one framed record, and not exceed MaxMessageSize.
func (m *Mailbox) MaxPartsClaimLength() int { return min(m.lay.maxFrag, m.lay.maxMessage) }

// MaxParts returns the most parts a message may have.
func (m *Mailbox) MaxParts() int { return m.maxParts }

// IsClosed reports whether the mailbox was closed.
func (m *Mailbox) IsClosed() bool { return m.state.Load() != stateOpen }

// CloseMode says what Close does with the messages still queued.
type CloseMode int

const (
	// Drain keeps what is queued for the owner to drain: Drain goes on
	// delivering until the mailbox is empty.
	Drain CloseMode = iota + 1
	// Discard consumes what is queued without delivering it, counts it
	// in Stats.Discarded and reports the number; later Drain calls discard
	// (and count) what still arrives.
	Discard
)

func (c CloseMode) String() string {
	switch c {
	case Drain:
		return "drain"
	case Discard:
		return "discard"
	}
	return fmt.Sprintf("CloseMode(%d)", int(c))
}

// Close refuses new sends at once (they return ErrClosed) and sets what
// happens to the messages queued. Close(Drain) may be called from any
// goroutine and returns 0. Close(Discard) consumes the queue and returns the
// number of messages discarded: call it from the draining goroutine only,
// never from inside a Handler (see Handler), and a mailbox closed with
// Drain may later be switched to Discard.
//
// A send that checked the state just before Close may still land after it:
// it is delivered (Drain) or discarded and counted (Discard) by the next
// Drain. A claim still open is waited for (or released by the liveness
// check), never skipped.
//
// A state word that holds none of the three states (a word in a shared
// file that another process scribbled over) is left alone and reported
// with an error wrapping ErrCorrupt: such a word makes IsClosed true and
// sends fail with ErrClosed, but nothing would be discarded.
func (m *Mailbox) Close(mode CloseMode) (int, error) {
	var st int64
	switch mode {
	case Drain:
		st = stateDrain
	case Discard:
		st = stateDiscard
	default:
		return 0, fmt.Errorf("%w: close mode %d", ErrConfig, int(mode))
	}
	for {
		cur := m.state.Load()
		if cur < stateOpen || cur > stateDiscard {
			// A word shared with other processes that holds no state this
			// package writes: corrupt, not "already closed" (a Discard
			// would discard nothing, silently).
			return 0, fmt.Errorf("%w: state word %d (0 open, 1 closed (drain), 2 closed (discard))", ErrCorrupt, cur)
		}
		if cur >= st || m.state.CompareAndSwap(cur, st) {
			break
		}
	}
	if mode == Drain {
		return 0, nil
	}
	return m.DiscardQueued()
}

// DiscardQueued consumes every message queued now without delivering it,
// counts them in Stats.Discarded and returns how many there were. Call it
// from the draining goroutine only, outside any Handler, after
// Close(Discard) (before, it returns 0: an open mailbox never discards).
func (m *Mailbox) DiscardQueued() (int, error) {
	total := 0
	for m.state.Load() == stateDiscard {
		n, err := m.Drain(discardHandler, ringbuf.NoLimit)
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
	return total, nil
}

func discardHandler(*Message) Action { return Continue }
