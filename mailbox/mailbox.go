package mailbox

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/internal/mailboxdef"
	"github.com/dutyrt/duty/internal/mailboxframe"
	"github.com/dutyrt/duty/internal/pad"
	"github.com/dutyrt/duty/internal/record"
)

// defaultCapacity and defaultUnblockTimeout are the defaults of
// Config.Capacity and Config.UnblockTimeout (internal/mailboxdef, which a
// host of a mailbox reads too).
const (
	defaultCapacity       = mailboxdef.DefaultCapacity
	defaultUnblockTimeout = mailboxdef.DefaultUnblockTimeout
)

// defaultMaxParts is the default limit on the parts of one message.
const defaultMaxParts = 1024

// defaultHeartbeatCycles is how many drains (Drain calls, or an actor's
// duty cycles) pass between two consumer heartbeats.
const defaultHeartbeatCycles = 256

// Config configures a Mailbox. The zero value is a heap mailbox with its
// own 64 KiB ring.
type Config struct {
	// Name names the mailbox in statistics and errors.
	Name string
	// Capacity is the ring's record capacity: a power of two, at least
	// 1024. Default 64 KiB. With a Host, the Host's
	// memory decides it (ipc.CreateMailbox sizes its file from it).
	Capacity int
	// MaxMessageSize bounds the body of a message: the payload of a
	// one-part message, or the sum of the part lengths plus
	// partLengthPrefix bytes per part of a multipart message. Default and
	// upper bound: what fits in a batch of half the ring's capacity
	// (Mailbox.MaxMessageSize reports it). Senders get ErrTooLong above it;
	// a receiver drops (and counts as corrupt) framed messages above its
	// own limit, so processes sharing a ring must agree on it (package ipc
	// stores the consumer's in the file).
	MaxMessageSize int
	// MaxParts bounds the parts of a multipart message. Default
	// 1024.
	MaxParts int
	// UnblockTimeout is how long Drain waits, without progress while a
	// claim is open at the head of the ring, before it calls the ring's
	// Unblock and counts the released claim as torn (a sender that died or
	// hung between claim and commit). Default 5 s. A
	// sender that is merely slower than this would write into space the
	// consumer has passed: keep it far above any scheduling delay.
	UnblockTimeout time.Duration
	// HeartbeatCycles is how many drains (Drain calls, or an actor's duty
	// cycles) pass between two consumer heartbeats: the epoch time stored
	// in the ring's consumer heartbeat word and, with a Host, the Host's
	// own (Host.Beat). Default 256. A consumer that
	// drains less often than its Host's timeout divided by this calls
	// Heartbeat from its duty cycle.
	HeartbeatCycles int
	// Clock is read for the liveness check of open claims (Nanos) and for
	// the consumer heartbeat (EpochMillis), never on a path that moves a
	// message. Default clock.System.
	Clock clock.Clock
	// NoDemote turns off the consumer's demotion of the lines it releases
	// (CLDEMOTE where the CPU has it; docs/ringbuf.md): for a
	// mailbox whose owner is the slower end, or where only the latency of
	// single messages counts. It is this view's choice, not the ring's.
	NoDemote bool
	// Checksum makes every record carry a CRC32C of its position and
	// bytes, which the consumer checks before it uses any of them: a
	// message whose bytes changed after its sender sealed them (the late
	// stores of a sender stalled past UnblockTimeout, into space another
	// sender has claimed since) is dropped and counted in Stats.Corrupt,
	// never delivered. It costs each message a checksum at both ends and
	// takes Send's in-line fast path away (docs/benchmarks.md has the
	// figures); records are then not Agrona's plain records. Every
	// process sharing the mailbox must agree: package ipc stores the
	// consumer's choice in the file.
	Checksum bool
	// Counters, if set, makes the mailbox publish its statistics as
	// counters allocated from this manager (a counters file of the
	// process: ipc.CreateCounters, or regions on the heap): delivered
	// messages and consumed bytes, refusals (closed, back-pressure),
	// torn, corrupt and discarded messages, the largest backlog, the
	// backlog a drain found (sampled at each consumer heartbeat, before
	// the drain), and the consumer heartbeat, labelled with Name. They
	// are updated at every consumer heartbeat (HeartbeatCycles drains,
	// and at most once per clock millisecond), and freed by
	// CloseCounters. Consumer view only.
	Counters *counters.Manager
	// Host places the mailbox in memory other processes share and tells
	// it whether its consumer lives (see Host). Package ipc sets it; nil
	// is a heap mailbox.
	Host Host
}

// Host places a mailbox in memory that other processes share, and tells
// it what only that placement knows: whether the consumer is alive, and
// what the consumer must do now and then to show that it is. Package ipc
// implements it for a mailbox in a shared file (ipc.CreateMailbox,
// ipc.OpenMailbox). A Host serves one mailbox.
type Host interface {
	// Attach is called once, by New. It returns the memory the mailbox
	// lives in and keeps detach, which it must call once, before that
	// memory goes away and after this process stopped using the mailbox:
	// from then on the mailbox's methods return ErrClosed (Stats the last
	// statistics) without touching it. A call racing detach may still
	// touch the memory.
	Attach(m *Mailbox, detach func()) (Placement, error)
	// CheckConsumer returns nil while the consumer drains, and an error
	// wrapping ErrConsumerDead once it has stopped. Senders of a view
	// that only sends call it when the mailbox is full (at the first
	// refusal, then one in consumerCheckEvery), while SendContext waits,
	// and after each send whose record holds the start of an eighth of
	// the ring (its result then ignored), so that a sender to a dead
	// consumer learns so, before the ring is full where it can, instead
	// of being back-pressured for ever. A Host that proves the consumer's
	// process gone raises the mailbox's shared state word to
	// mailboxdef.StateConsumerDead: every later send, in every process,
	// is then refused at once with what CheckConsumer returns (it must
	// then be cheap: an error made once). Safe for concurrent use.
	CheckConsumer() error
	// Beat runs on the consumer's goroutine every Config.HeartbeatCycles
	// drains and at Heartbeat (force true), after the mailbox stored
	// nowMillis (epoch ms) as the ring's consumer heartbeat: the Host
	// refreshes what shows its side alive (a file's owner heartbeat) and
	// may publish statistics. An error is returned by the Drain (or duty
	// cycle) that ran it, which then drains nothing.
	Beat(nowMillis int64, force bool) error
}

// Placement is the memory a Host gives a mailbox. The mailbox never
// writes to it in New: a mailbox opened by a second process sees what the
// first one left. Memory placed for a new mailbox must be zero.
type Placement struct {
	// Ring is the buffer of the mailbox's many-to-one ring, in Agrona's
	// layout (docs/layouts.md): a power of two of at least 1024
	// bytes of records plus the 768-byte trailer, 8-byte aligned.
	Ring []byte
	// Words is where the mailbox keeps its shared words (its state and
	// statistics, layout.go): WordsLength bytes, 8-byte aligned.
	Words []byte
	// SendOnly marks a view of a mailbox whose consumer is another
	// process: Drain, Close(Discard), Heartbeat and
	// NewActor refuse it with ErrNotConsumer.
	SendOnly bool
}

// Mailbox is a bounded many-to-one mailbox over an Agrona-layout ring: any
// number of goroutines (and, with a Host, processes) send, one goroutine
// drains. See the package documentation for the contract.
type Mailbox struct {
	_ noCopy
	// Padding on both sides keeps the senders' read-only lines away from
	// whatever the allocator puts next to the mailbox.
	_ pad.Pair

	// Read-only after New (but for detach), shared by senders and the
	// consumer; but for prod's tail guess, which every send stores, on
	// cache lines of its own inside prod.
	name string
	// The ring, Agrona's many-to-one ring over the record core: buf is its
	// records and trailer, prod the producer side (every send goes through
	// it, with the mailbox's own tail guess), trailer its words; the
	// consumer side (the record core's Reader) is the consumer's, cons.rd.
	// fast is &prod while Send's in-line fast path may run (nil if
	// plainMax < record.MaxPayload, and once detached); Send loads it
	// before the claim.
	buf      []byte
	prod     record.Producer
	fast     *record.Producer
	trailer  record.Trailer
	plainMax int // the largest plain message: min(one record, MaxMessageSize)
	capacity int
	lay      mailboxframe.Layout
	maxParts int
	w        *words
	host     Host // nil: a heap mailbox
	sendOnly bool
	checksum bool // Config.Checksum: every record is sealed (mailboxframe.Seal)
	gone     bool // the Host took the memory away (detach)
	timeout  int64
	hbCycles int
	clock    clock.Clock
	// probeSpan is an eighth of the ring in a view that only sends
	// through a Host: a send whose record holds a multiple of it asks
	// the Host about the consumer (crossing). math.MaxUint elsewhere, so
	// that the test, one compare with this read-only word, never passes.
	probeSpan uint

	// refusals counts back-pressured sends through the Mailbox's own
	// methods since the last consumer check (Host only; a Sender keeps
	// its own count).
	_        pad.Pair
	refusals atomic.Int64
	_        [pad.PairSize - 8]byte

	// The consumer's state, on its own cache lines.
	cons consumer
	live *liveCounters // Config.Counters; the consumer's
	_    pad.Pair
}

// noCopy makes go vet report copies of a Mailbox.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// New returns a mailbox configured by cfg: on the heap, or where cfg.Host
// places it.
func New(cfg Config) (*Mailbox, error) {
	if cfg.MaxMessageSize < 0 || cfg.MaxParts < 0 || cfg.UnblockTimeout < 0 || cfg.HeartbeatCycles < 0 {
		return nil, fmt.Errorf("%w: negative MaxMessageSize %d, MaxParts %d, UnblockTimeout %v or HeartbeatCycles %d",
			ErrArgument, cfg.MaxMessageSize, cfg.MaxParts, cfg.UnblockTimeout, cfg.HeartbeatCycles)
	}
	m := &Mailbox{
		name:     cfg.Name,
		maxParts: cfg.MaxParts,
		timeout:  int64(cfg.UnblockTimeout),
		hbCycles: cfg.HeartbeatCycles,
		clock:    cfg.Clock,
		host:     cfg.Host,
	}
	var buf []byte
	if cfg.Host == nil {
		capacity := cfg.Capacity
		if capacity == 0 {
			capacity = defaultCapacity
		}
		if capacity < minCapacity || capacity&(capacity-1) != 0 || capacity > math.MaxInt32 {
			return nil, fmt.Errorf("%w: capacity %d is not a power of two >= %d", ErrArgument, capacity, minCapacity)
		}
		buf = record.AllocateRing(capacity)
		m.w = &new(ownWords).w
	} else {
		p, err := cfg.Host.Attach(m, m.detach)
		if err != nil {
			return nil, err
		}
		if m.w, err = wordsAt(p.Words); err != nil {
			return nil, err
		}
		buf, m.sendOnly = p.Ring, p.SendOnly
	}
	capacity := len(buf) - record.TrailerLength
	if capacity < minCapacity || capacity&(capacity-1) != 0 || capacity > math.MaxInt32 {
		return nil, fmt.Errorf("%w: a ring of %d bytes is not a power of two >= %d plus the %d-byte trailer",
			ErrArgument, len(buf), minCapacity, record.TrailerLength)
	}
	ab, err := atomicbuf.New(buf)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrArgument, err)
	}
	maxRecord := record.MaxMessageLength(capacity, record.HeaderLength)
	lay := mailboxframe.NewLayout(capacity, maxRecord, 0, cfg.Checksum)
	if cfg.MaxMessageSize > lay.MaxMessage {
		return nil, fmt.Errorf("%w: MaxMessageSize %d exceeds %d, the most a batch of half the ring carries",
			ErrArgument, cfg.MaxMessageSize, lay.MaxMessage)
	}
	m.lay = mailboxframe.NewLayout(capacity, maxRecord, cfg.MaxMessageSize, cfg.Checksum)
	m.checksum = cfg.Checksum
	m.buf = buf
	m.capacity = capacity
	m.trailer = record.TrailerOf(ab, capacity)
	records := buf[:capacity:capacity]
	m.prod.Init(records, m.trailer.Tail, m.trailer.HeadCache, m.trailer.Head, maxRecord, true)
	m.cons.rd.Init(records, m.trailer.Head, true)
	if cfg.NoDemote {
		m.cons.rd.SetDemote(false) // this view's choice: nothing in the ring changes
	}
	m.fast = &m.prod
	m.plainMax = min(m.lay.MaxRecord-m.lay.Over, m.lay.MaxMessage)
	if m.maxParts == 0 {
		m.maxParts = defaultMaxParts
	}
	if m.timeout == 0 {
		m.timeout = int64(defaultUnblockTimeout)
	}
	if m.hbCycles == 0 {
		m.hbCycles = defaultHeartbeatCycles
	}
	if m.clock == nil {
		m.clock = clock.System
	}
	if m.plainMax < record.MaxPayload || m.checksum {
		// Send's fast path takes up to record.MaxPayload bytes without
		// looking at MaxMessageSize, and writes plain records: off for a
		// limit below that, and for sealed records.
		m.fast = nil
	}
	m.probeSpan = math.MaxUint
	if m.host != nil && m.sendOnly {
		m.probeSpan = uint(capacity / probeParts)
	}
	m.cons.init(m)
	if cfg.Counters != nil {
		if m.sendOnly {
			return nil, fmt.Errorf("%w: %s: counters are the consumer's, and this view only sends", ErrArgument, m.name)
		}
		live, err := newLiveCounters(cfg.Counters, m.name)
		if err != nil {
			return nil, err
		}
		m.live = live
		m.live.publish(m, m.clock.EpochMillis())
	}
	return m, nil
}

// Name returns the mailbox's name.
func (m *Mailbox) Name() string { return m.name }

// size returns the bytes between head and tail, clamped to [0,
// Capacity]: headers, padding and open claims included. An indication
// only: senders and the consumer move on as it is computed.
func (m *Mailbox) size() int {
	head, tail := m.trailer.Head, m.trailer.Tail
	h1 := head.Load()
	for {
		t := tail.Load()
		h2 := head.Load()
		if h1 == h2 {
			return int(min(max(t-h2, 0), int64(m.capacity)))
		}
		h1 = h2
	}
}

// Capacity returns the ring's capacity in bytes.
func (m *Mailbox) Capacity() int { return m.capacity }

// MaxMessageSize returns the largest message body Send and SendParts
// accept (see Config.MaxMessageSize).
func (m *Mailbox) MaxMessageSize() int { return m.lay.MaxMessage }

// MaxClaimLength returns the largest payload sent as one plain record: the
// most Claim accepts, and the largest Send that is not fragmented. It is
// one record's payload, or MaxMessageSize if that is smaller.
func (m *Mailbox) MaxClaimLength() int { return m.plainMax }

// MaxPartsClaimLength returns the largest body ClaimParts accepts: the
// sum of the part lengths plus partLengthPrefix bytes per part must fit in
// one framed record, and not exceed MaxMessageSize.
func (m *Mailbox) MaxPartsClaimLength() int { return min(m.lay.MaxFrag, m.lay.MaxMessage) }

// MaxParts returns the most parts a message may have.
func (m *Mailbox) MaxParts() int { return m.maxParts }

// Err returns nil while the mailbox is open, ErrClosed once it was closed
// (or its Host took its memory away), an error matching ErrConsumerDead
// once its Host proved the consumer's process gone, and an error wrapping ErrCorrupt
// when its state word in shared memory holds no state: what a send would
// be refused with, without counting a refusal.
func (m *Mailbox) Err() error {
	if st := m.w.state.Load(); st != stateOpen {
		return m.stateErr(st)
	}
	return nil
}

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

// Close refuses new sends at once (they return ErrClosed, in every process
// sharing the mailbox) and sets what happens to the messages queued.
// Close(Drain) may be called from any goroutine and returns 0.
// Close(Discard) consumes the queue and returns the number of messages
// discarded: call it from the draining goroutine only, never from inside
// a Handler (see Handler); a mailbox closed with Drain may later be
// switched to Discard.
//
// A send whose claim was made before Close is delivered (Drain) or
// discarded and counted (Discard) by a later Drain; a claim still open is
// waited for (or released by the liveness check), never skipped. Every
// send and claim loads the state again after claiming its space and
// aborts the claim if the mailbox was closed meanwhile (ErrClosed), so
// once the consumer has seen the mailbox closed and then empty, no
// message can arrive any more: an actor ends there (agent.ErrDone).
//
// A state word that holds none of the three states (a word in shared
// memory that another process scribbled over) is left alone and reported
// with an error wrapping ErrCorrupt: such a word makes Err report it and
// sends fail with ErrCorrupt, but nothing would be discarded.
func (m *Mailbox) Close(mode CloseMode) (int, error) {
	var st int64
	switch mode {
	case Drain:
		st = stateDrain
	case Discard:
		if m.sendOnly {
			return 0, errNotConsumer(m, "Close(Discard)")
		}
		st = stateDiscard
	default:
		return 0, fmt.Errorf("%w: close mode %d", ErrArgument, int(mode))
	}
	for {
		cur := m.w.state.Load()
		if cur < stateOpen || cur > stateDiscard {
			return 0, m.stateErr(cur)
		}
		if cur >= st || m.w.state.CompareAndSwap(cur, st) {
			break
		}
	}
	m.rang() // a consumer asleep on the doorbell (WakeIdle) wakes to the close
	if mode == Drain {
		return 0, nil
	}
	return m.discardQueued()
}

// discardQueued consumes every message queued now without delivering it,
// counts them in Stats.Discarded and returns how many there were: what
// Close(Discard) does, again on every call. Draining goroutine only,
// outside any Handler; an open mailbox never discards.
func (m *Mailbox) discardQueued() (int, error) {
	if m.sendOnly {
		return 0, errNotConsumer(m, "Close(Discard)")
	}
	total := 0
	for m.w.state.Load() == stateDiscard {
		m.cons.h, m.cons.recv = discardHandler, nil
		n, err := m.drain(m.cons.onRecord, math.MaxInt)
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
	return total, nil
}

func discardHandler(*Message) Action { return Continue }

// stateErr is the error for a state word that is not open: ErrClosed for
// the two closed states and a detached mailbox, an error wrapping
// ErrCorrupt for a value no mailbox writes (in shared memory that another
// process scribbled over), ErrConsumerDead for a consumer its Host proved
// gone. Out of the send paths' line.
func (m *Mailbox) stateErr(st int64) error {
	if st == stateDrain || st == stateDiscard || (st == stateDetached && m.gone) {
		return ErrClosed
	}
	if st == stateConsumerDead {
		if m.host != nil {
			// The Host's account of the death (for package ipc, its
			// owner's process), said once and kept: no system call.
			if err := m.host.CheckConsumer(); errors.Is(err, ErrConsumerDead) {
				return err
			}
		}
		return ErrConsumerDead
	}
	return fmt.Errorf("%w: %s: state word %d (0 open, 1 closed (drain), 2 closed (discard))", ErrCorrupt, m.name, st)
}

// detach is the function New hands the Host: it moves the mailbox off the
// Host's memory, onto a copy of its words in this process whose state
// refuses everything (stateDetached) and an empty ring of its own, so that
// later calls return ErrClosed instead of touching memory that is gone;
// the consumer's liveness check runs at every idle poll from then on, so
// that an actor's poll calls the drain that reports ErrClosed. The Host
// calls it once this process has stopped using the mailbox (plain field
// stores: a call racing it is outside the contract, as any use of memory
// being unmapped is).
func (m *Mailbox) detach() {
	if m.gone {
		return
	}
	final := m.Stats()
	w := &new(ownWords).w
	w.delivered.Store(final.Delivered)
	w.maxDepth.Store(final.MaxDepth)
	w.torn.Store(final.Torn)
	w.corrupt.Store(final.Corrupt)
	w.discarded.Store(final.Discarded)
	w.backPressured.Store(final.BackPressured)
	w.refusedClosed.Store(final.RefusedClosed)
	w.state.Store(stateDetached)
	m.cons.lastDepth, m.cons.lastStranded = final.Depth, final.Stranded
	m.w = w
	m.fast = nil
	m.gone = true
	buf := record.AllocateRing(minCapacity)
	ab, _ := atomicbuf.New(buf) // AllocateRing aligns it
	m.buf, m.trailer = buf, record.TrailerOf(ab, minCapacity)
	records := buf[:minCapacity:minCapacity]
	m.prod.Init(records, m.trailer.Tail, m.trailer.HeadCache, m.trailer.Head, record.MaxMessageLength(minCapacity, record.HeaderLength), true)
	m.cons.rd.Init(records, m.trailer.Head, true)
	m.cons.claimMask = 0
}
