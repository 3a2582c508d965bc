package ipc

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/ipc/counters"
	"github.com/dutyrt/duty/mailbox"
)

// Mailbox defaults.
const (
	// DefaultConsumerTimeout is how old the consumer heartbeat may grow
	// before back-pressured senders report ErrConsumerDead (Aeron's driver
	// timeout).
	DefaultConsumerTimeout = 10 * time.Second
	// DefaultMailboxHeartbeatCycles is how many Drain calls the owner lets
	// pass between two reads of the clock for its heartbeat.
	DefaultMailboxHeartbeatCycles = 256
)

// mailboxReadyWait is how long after a file's creation OpenMailbox waits
// for its mailbox header (the creator writes it right after Create): a ring
// file older than that without one is not a mailbox.
const mailboxReadyWait = 5 * time.Second

var (
	// ErrConsumerDead reports a mailbox whose consumer has stopped draining:
	// its heartbeat is older than the mailbox's consumer timeout. Senders get
	// it instead of back-pressure forever. The error wraps ErrOwnerDead as
	// well when the consumer's process is gone (or closed the file), and
	// says so when the process still runs (hung, or not draining).
	ErrConsumerDead = errors.New("ipc: mailbox consumer is dead")
	// ErrNotMailbox reports a ring file without a mailbox header (a plain
	// ring, or a creator that died before writing it). It wraps ErrKind.
	ErrNotMailbox = fmt.Errorf("ipc: not a mailbox: %w", ErrKind)
)

// MailboxConfig configures CreateMailbox. The zero value is a 64 KiB
// mailbox with the mailbox package's defaults and a 10 s consumer timeout.
type MailboxConfig struct {
	// Name names the mailbox in statistics and counter labels. Default: the
	// file name.
	Name string
	// Capacity is the ring's record capacity: a power of two, at least
	// mailbox.MinCapacity. Default mailbox.DefaultCapacity (64 KiB).
	Capacity int
	// MaxMessageSize and MaxParts bound messages (mailbox.Config). The
	// effective values are stored in the file, so every sender applies the
	// consumer's limits.
	MaxMessageSize int
	MaxParts       int
	// UnblockTimeout is how long Drain waits at a claim that is not
	// committed (a sender that died between claim and commit) before it
	// drops it as torn. Default mailbox.DefaultUnblockTimeout (5 s). Keep
	// it far above any pause of a live sender.
	UnblockTimeout time.Duration
	// ConsumerTimeout is how old the consumer heartbeat may grow before
	// back-pressured senders report ErrConsumerDead. Default
	// DefaultConsumerTimeout. Stored in the file. The owner refreshes the
	// heartbeat from Drain (see HeartbeatCycles): drain more often than
	// ConsumerTimeout/HeartbeatCycles, or call Heartbeat.
	ConsumerTimeout time.Duration
	// HeartbeatCycles is the number of Drain calls between two reads of the
	// clock for the consumer heartbeat. Default
	// DefaultMailboxHeartbeatCycles.
	HeartbeatCycles int
	// Clock is the monotonic clock (ns) of the torn-claim liveness check
	// (mailbox.Config.Clock). Default: the runtime's. Heartbeats use the
	// wall clock of WithClock (epoch ms, compared across processes).
	Clock func() int64
	// NoDemote turns off the owner's demotion of the ring lines it
	// releases (mailbox.Config.NoDemote, ringbuf.ManyToOne.SetDemote): for
	// a mailbox whose owner, not its senders, is the slower end. It is
	// this process's choice, not stored in the file.
	NoDemote bool
	// Counters, if set, is a counters file this process owns: the mailbox
	// allocates counters in it (mailbox-depth, back-pressure,
	// unblocked-claims for torn messages, torn-messages for corrupt
	// records, and a heartbeat) and mirrors its statistics into them on
	// every heartbeat. Close frees them. The counters file must outlive
	// the mailbox.
	Counters *CountersFile
}

// Mailbox is a mailbox.Mailbox whose many-to-one ring lives in a shared
// file: any number of processes send, the owner (the process that created
// it) drains. Sends have the mailbox package's API and outcomes, plus
// ErrConsumerDead when the ring is full and the consumer's heartbeat has
// gone stale. See CreateMailbox and OpenMailbox, and docs/ipc.md.
//
// The send methods are safe for concurrent use; Drain, Heartbeat and the
// Discard close belong to the owner's draining goroutine. The Mailbox
// holds one reference to its file: Close releases it. After Close the
// Mailbox's own methods return mailbox.ErrClosed (sends, claims, Drain,
// Heartbeat; IsClosed reports true) instead of touching the unmapped file;
// but a call racing Close, a claim committed after it, or a use of what
// Mailbox(), Ring() or a MailboxSender's Sender() returned may fault: close
// once this process's senders stopped.
type Mailbox struct {
	_ [128]byte // keep the read-only words away from a neighbour's hot data

	mb        *mailbox.Mailbox
	ring      *Ring
	file      *File
	owner     bool
	timeoutMs int64
	epochMs   func() int64
	version   *atomic.Int32
	state     *atomic.Int64 // the state word in the file (mailbox.Config.State)
	// closed is set by Close before the file is released: written once,
	// loaded by every call that touches the mapping (use after Close), so
	// it sits with the read-only words, not beside the owner's draining
	// state, which Drain writes on every call.
	closed atomic.Bool

	_        [128]byte
	refusals atomic.Int64 // back-pressured sends since the last consumer check
	_        [120]byte

	// The owner's draining state.
	cycles   int
	hbCycles int
	lastHb   int64
	lastFile int64
	fileHbMs int64
	ctrs     *mailboxCounters
	closing  atomic.Bool   // Close has begun (its idempotence)
	final    mailbox.Stats // Stats after Close: written before closed is set
	_        [128]byte
}

// mailboxWords are a mailbox's shared words in the file's spare slots.
type mailboxWords struct {
	state, maxMessage, maxParts, consumerTimeout, unblockTimeout *atomic.Int64
	version                                                      *atomic.Int32
	ctr                                                          mailbox.Counters
}

func mailboxWordsOf(f *File) (mailboxWords, error) {
	var w mailboxWords
	var slots [3]atomicbuf.Buffer
	for i, n := range []int{MailboxHeaderSlot, MailboxConsumerStatsSlot, MailboxSenderStatsSlot} {
		b, err := f.SpareSlot(n)
		if err != nil {
			return w, err
		}
		if slots[i], err = atomicbuf.New(b); err != nil {
			return w, fmt.Errorf("%w: %s: spare slot %d: %w", ErrCorrupt, f.Path(), n, err)
		}
	}
	h, c, s := slots[0], slots[1], slots[2]
	w.state = h.Int64At(MailboxStateOffset)
	w.version = h.Int32At(MailboxVersionOffset)
	w.maxMessage = h.Int64At(MailboxMaxMessageSizeOffset)
	w.maxParts = h.Int64At(MailboxMaxPartsOffset)
	w.consumerTimeout = h.Int64At(MailboxConsumerTimeoutOffset)
	w.unblockTimeout = h.Int64At(MailboxUnblockTimeoutOffset)
	w.ctr = mailbox.Counters{
		Delivered:     c.Int64At(MailboxDeliveredOffset),
		MaxDepth:      c.Int64At(MailboxMaxDepthOffset),
		Torn:          c.Int64At(MailboxTornOffset),
		Corrupt:       c.Int64At(MailboxCorruptOffset),
		Discarded:     c.Int64At(MailboxDiscardedOffset),
		BackPressured: s.Int64At(MailboxBackPressuredOffset),
		RefusedClosed: s.Int64At(MailboxRefusedClosedOffset),
	}
	return w, nil
}

// CreateMailbox creates dir/name (see CreateRing and Create, which read
// opts: WithMode, WithLivenessTimeout, WithReplaceStale, WithClock, ...) as
// a mailbox file and returns its owner: the process that drains it.
//
// The file is a KindRing file whose ring holds the messages; the mailbox's
// state word (so that senders in other processes see Close), its limits,
// its consumer timeout and its statistics live in the header's spare slots
// (mailbox_layout.go). The mailbox version word is stored last: OpenMailbox
// waits for it. The consumer heartbeat (the ring's consumerHeartbeat word,
// epoch ms) starts at the creation time; Drain refreshes it.
func CreateMailbox(dir, name string, cfg MailboxConfig, opts ...Option) (*Mailbox, error) {
	if cfg.Capacity == 0 {
		cfg.Capacity = mailbox.DefaultCapacity
	}
	if cfg.ConsumerTimeout == 0 {
		cfg.ConsumerTimeout = DefaultConsumerTimeout
	}
	if cfg.UnblockTimeout == 0 {
		cfg.UnblockTimeout = mailbox.DefaultUnblockTimeout
	}
	if cfg.HeartbeatCycles == 0 {
		cfg.HeartbeatCycles = DefaultMailboxHeartbeatCycles
	}
	switch {
	case cfg.Capacity < mailbox.MinCapacity || cfg.Capacity&(cfg.Capacity-1) != 0 || cfg.Capacity > math.MaxInt32:
		return nil, fmt.Errorf("%w: mailbox capacity %d is not a power of two >= %d", ErrArgument, cfg.Capacity, mailbox.MinCapacity)
	case cfg.ConsumerTimeout < time.Millisecond || cfg.ConsumerTimeout.Milliseconds() > maxMailboxTimeoutMs:
		return nil, fmt.Errorf("%w: consumer timeout %s (1 ms to 24 h)", ErrArgument, cfg.ConsumerTimeout)
	case cfg.UnblockTimeout < time.Millisecond || cfg.UnblockTimeout.Milliseconds() > maxMailboxTimeoutMs:
		return nil, fmt.Errorf("%w: unblock timeout %s (1 ms to 24 h)", ErrArgument, cfg.UnblockTimeout)
	case cfg.HeartbeatCycles < 1:
		return nil, fmt.Errorf("%w: heartbeat every %d drains", ErrArgument, cfg.HeartbeatCycles)
	case cfg.MaxParts > maxMailboxParts:
		return nil, fmt.Errorf("%w: %d parts, at most %d", ErrArgument, cfg.MaxParts, maxMailboxParts)
	case cfg.Counters != nil && cfg.Counters.Manager() == nil:
		return nil, fmt.Errorf("%w: counters file %s is not owned by this process", ErrArgument, cfg.Counters.File().Path())
	}
	if cfg.Name == "" {
		cfg.Name = name
	}
	c := newConfig(opts)
	r, err := CreateRing(dir, name, cfg.Capacity, opts...)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Mailbox, error) {
		return nil, errors.Join(err, r.File().Remove(), r.Close())
	}
	w, err := mailboxWordsOf(r.File())
	if err != nil {
		return fail(err)
	}
	mb, err := mailbox.New(mailbox.Config{
		Name:           cfg.Name,
		Ring:           r.ManyToOne,
		MaxMessageSize: cfg.MaxMessageSize,
		MaxParts:       cfg.MaxParts,
		UnblockTimeout: cfg.UnblockTimeout,
		Clock:          cfg.Clock,
		NoDemote:       cfg.NoDemote,
		State:          w.state,
		Counters:       w.ctr,
	})
	if err != nil {
		return fail(fmt.Errorf("%w: %w", ErrArgument, err))
	}
	m := newMailbox(mb, r, w, true, cfg.ConsumerTimeout.Milliseconds(), c)
	m.hbCycles = cfg.HeartbeatCycles
	// The file heartbeat is an fstat and a guarded store: a few times per
	// liveness timeout is enough.
	m.fileHbMs = max(min(cfg.ConsumerTimeout, r.File().LivenessTimeout()).Milliseconds()/8, 1)
	if cfg.Counters != nil {
		if m.ctrs, err = newMailboxCounters(cfg.Counters.Manager(), cfg.Name); err != nil {
			return fail(err)
		}
	}
	// The parameters, then the first heartbeat, then the version (atomic,
	// last): a sender that loads a non-zero version sees the rest.
	w.maxMessage.Store(int64(mb.MaxMessageSize()))
	w.maxParts.Store(int64(mb.MaxParts()))
	w.consumerTimeout.Store(cfg.ConsumerTimeout.Milliseconds())
	w.unblockTimeout.Store(cfg.UnblockTimeout.Milliseconds())
	now := m.epochMs()
	r.SetConsumerHeartbeatTime(now)
	m.lastHb, m.lastFile = now, now
	m.mirror(now)
	w.version.Store(MailboxLayoutVersion)
	return m, nil
}

func newMailbox(mb *mailbox.Mailbox, r *Ring, w mailboxWords, owner bool, timeoutMs int64, c config) *Mailbox {
	now := c.now
	return &Mailbox{
		mb:        mb,
		ring:      r,
		file:      r.File(),
		owner:     owner,
		timeoutMs: timeoutMs,
		epochMs:   func() int64 { return now().UnixMilli() },
		version:   w.version,
		state:     w.state,
	}
}

// OpenMailbox opens the mailbox file at path (see OpenRing and Open, which
// read opts: WithWaitForFile, WithPollInterval, WithClock, ...) as a
// sender. It waits, until ctx ends, for a mailbox header still being
// written, then checks it: a ring file without one gives ErrNotMailbox, a
// newer mailbox version a VersionError-like error matching ErrVersion,
// values no creator writes ErrCorrupt. A mailbox already closed gives an
// error matching mailbox.ErrClosed, one whose consumer heartbeat is stale
// ErrConsumerDead. The sender uses the limits stored by the consumer.
//
// WithClock sets the wall clock the consumer heartbeat is compared with.
func OpenMailbox(ctx context.Context, path string, opts ...Option) (*Mailbox, error) {
	c := newConfig(opts)
	r, err := OpenRing(ctx, path, opts...)
	if err != nil {
		return nil, err
	}
	m, err := openMailbox(ctx, r, c)
	if err != nil {
		return nil, errors.Join(err, r.Close())
	}
	return m, nil
}

func openMailbox(ctx context.Context, r *Ring, c config) (*Mailbox, error) {
	f := r.File()
	w, err := mailboxWordsOf(f)
	if err != nil {
		return nil, err
	}
	var first time.Time // when this opener first found no header
	for {
		v := w.version.Load() // acquires the creator's stores before it
		if v > MailboxLayoutVersion || v < 0 {
			return nil, fmt.Errorf("%w: %s: mailbox layout version %d, this build reads up to %d", ErrVersion, f.Path(), v, MailboxLayoutVersion)
		}
		if v != 0 {
			break
		}
		hb, _ := f.HeartbeatMillis()
		now := c.now()
		if first.IsZero() {
			first = now
		}
		// The wait is bounded by the file's age and by this opener's own
		// wait: a creation time in the future (a corrupt header, or a
		// creator whose clock is ahead) must not make it wait for ever.
		age, waited := now.Sub(time.UnixMilli(f.hdr.created)), now.Sub(first)
		if age > mailboxReadyWait || waited > mailboxReadyWait || hb == HeartbeatClosed {
			return nil, fmt.Errorf("%w: %s has no mailbox header (created %s ago, waited %s)",
				ErrNotMailbox, f.Path(), age.Round(time.Millisecond), waited.Round(time.Millisecond))
		}
		if werr := wait(ctx, c.pollInterval); werr != nil {
			return nil, fmt.Errorf("%w: %s: mailbox header not written yet: %w", ErrNotReady, f.Path(), werr)
		}
	}
	maxMessage, maxParts := w.maxMessage.Load(), w.maxParts.Load()
	timeoutMs, unblockMs := w.consumerTimeout.Load(), w.unblockTimeout.Load()
	switch {
	case maxMessage < 1 || maxMessage > int64(r.Capacity()):
		return nil, fmt.Errorf("%w: %s: mailbox max message size %d", ErrCorrupt, f.Path(), maxMessage)
	case maxParts < 1 || maxParts > maxMailboxParts:
		return nil, fmt.Errorf("%w: %s: mailbox max parts %d", ErrCorrupt, f.Path(), maxParts)
	case timeoutMs < 1 || timeoutMs > maxMailboxTimeoutMs, unblockMs < 1 || unblockMs > maxMailboxTimeoutMs:
		return nil, fmt.Errorf("%w: %s: mailbox timeouts %d ms (consumer), %d ms (unblock)", ErrCorrupt, f.Path(), timeoutMs, unblockMs)
	case r.Capacity() < mailbox.MinCapacity:
		return nil, fmt.Errorf("%w: %s: mailbox ring of %d bytes", ErrCorrupt, f.Path(), r.Capacity())
	}
	mb, err := mailbox.New(mailbox.Config{
		Name:           filepath.Base(f.Path()),
		Ring:           r.ManyToOne,
		MaxMessageSize: int(maxMessage),
		MaxParts:       int(maxParts),
		UnblockTimeout: time.Duration(unblockMs) * time.Millisecond,
		State:          w.state,
		Counters:       w.ctr,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: mailbox header: %w", ErrCorrupt, f.Path(), err)
	}
	m := newMailbox(mb, r, w, false, timeoutMs, c)
	if err := m.stateErr(); err != nil {
		return nil, err
	}
	if mb.IsClosed() {
		return nil, fmt.Errorf("%w: %s", mailbox.ErrClosed, f.Path())
	}
	if err := m.CheckConsumer(); err != nil {
		return nil, err
	}
	return m, nil
}

// stateErr returns an error wrapping ErrCorrupt when the file's state word
// holds a value no mailbox writes (only mailbox.StateOpen,
// StateClosedDrain and StateClosedDiscard, in that order, are ever
// stored), and nil otherwise. The mailbox package reads any other value as
// "closed" (not open) but not as "discard": without this check a scribbled
// word made every send fail with a plain mailbox.ErrClosed and a
// Close(Discard) discard nothing, silently. It is called where the word
// decides something outside the send fast path: OpenMailbox, a send
// refused as closed, the owner's heartbeat tick and Close. An atomic load:
// the word is shared with other processes.
func (m *Mailbox) stateErr() error {
	if st := m.state.Load(); st < mailbox.StateOpen || st > mailbox.StateClosedDiscard {
		return fmt.Errorf("%w: %s: mailbox state word %d (0 open, 1 closed (drain), 2 closed (discard))", ErrCorrupt, m.Path(), st)
	}
	return nil
}

// closedErr is the result of a send refused as closed: mailbox.ErrClosed,
// unwrapped, or the corruption that made the state word look closed.
func (m *Mailbox) closedErr() error {
	if err := m.stateErr(); err != nil {
		return err
	}
	return mailbox.ErrClosed
}

// Mailbox returns the in-process mailbox over the file's ring. Its send
// methods have no dead-consumer check (a full ring stays ErrBackPressured);
// its Drain does not heartbeat. Senders normally use this Mailbox's
// methods; the owner may use it for what this type does not forward
// (Close(Discard), DiscardQueued). An agent draining the owner's mailbox is
// NewMailboxActor, not a mailbox.Actor over this Mailbox, which would
// refresh the ring's consumer heartbeat but never the file's owner
// heartbeat. After Close, what it returned must not be used (the file is
// unmapped).
func (m *Mailbox) Mailbox() *mailbox.Mailbox { return m.mb }

// Ring returns the ring under the mailbox, with its file.
func (m *Mailbox) Ring() *Ring { return m.ring }

// File returns the mailbox's file.
func (m *Mailbox) File() *File { return m.file }

// Path returns the file's path.
func (m *Mailbox) Path() string { return m.file.Path() }

// IsOwner reports whether this Mailbox created the file: the consumer.
func (m *Mailbox) IsOwner() bool { return m.owner }

// ConsumerTimeout returns the consumer timeout stored in the file.
func (m *Mailbox) ConsumerTimeout() time.Duration {
	return time.Duration(m.timeoutMs) * time.Millisecond
}

// Stats returns a snapshot of the mailbox's statistics. The counters live
// in the file, so every process sees the same totals (BackPressured and
// RefusedClosed summed over all senders).
//
// After Close it returns the statistics Close saw last.
func (m *Mailbox) Stats() mailbox.Stats {
	if m.closed.Load() {
		return m.final
	}
	return m.mb.Stats()
}

// IsClosed reports whether the owner closed the mailbox.
// After this Mailbox's own Close it reports true (the file is unmapped).
func (m *Mailbox) IsClosed() bool { return m.closed.Load() || m.mb.IsClosed() }

// ConsumerHeartbeat returns the consumer's last heartbeat (epoch ms).
// After Close it returns 0 (the file is unmapped).
func (m *Mailbox) ConsumerHeartbeat() int64 {
	if m.closed.Load() {
		return 0
	}
	return m.ring.ConsumerHeartbeatTime()
}

// CheckConsumer returns nil when the consumer heartbeat is fresh (not older
// than the consumer timeout, nor further in the future), and otherwise an
// error wrapping ErrConsumerDead that describes the owner's process (and
// wraps ErrOwnerDead when it is gone or closed the file). Senders call it
// when back-pressured; any goroutine may call it.
func (m *Mailbox) CheckConsumer() error {
	if m.closed.Load() {
		return mailbox.ErrClosed
	}
	now := m.epochMs()
	hb := m.ring.ConsumerHeartbeatTime()
	if age := now - hb; age <= m.timeoutMs && age >= -m.timeoutMs {
		return nil
	}
	return m.deadConsumer(now, hb)
}

func (m *Mailbox) deadConsumer(now, hb int64) error {
	l, err := m.file.Liveness(time.UnixMilli(now), 0)
	if err != nil {
		return fmt.Errorf("%w: %s: consumer heartbeat %d ms old (timeout %d ms): %w", ErrConsumerDead, m.Path(), now-hb, m.timeoutMs, err)
	}
	if !l.Running || l.State == Closed {
		return fmt.Errorf("%w: %s: consumer heartbeat %d ms old (timeout %d ms): %w: %s", ErrConsumerDead, m.Path(), now-hb, m.timeoutMs, ErrOwnerDead, l)
	}
	return fmt.Errorf("%w: %s: consumer heartbeat %d ms old (timeout %d ms), its process still runs (hung or not draining): %s", ErrConsumerDead, m.Path(), now-hb, m.timeoutMs, l)
}

var errDrainNotOwner = fmt.Errorf("%w: only the mailbox's creator drains it", ErrNotOwner)

// Drain is mailbox.Mailbox.Drain for the owner, plus the heartbeat: every
// HeartbeatCycles calls it reads the wall clock, stores the consumer
// heartbeat in the ring (when the millisecond changed), mirrors the
// statistics into the counters file (if any), and a few times per timeout
// refreshes the file's owner heartbeat (File.Heartbeat: an fstat that also
// catches a truncated file, whose error Drain returns without draining).
// Owner only (ErrNotOwner), from its one draining goroutine.
func (m *Mailbox) Drain(h mailbox.Handler, limit int) (int, error) {
	if !m.owner {
		return 0, errDrainNotOwner
	}
	if m.closed.Load() {
		return 0, mailbox.ErrClosed
	}
	if err := m.cycle(); err != nil {
		return 0, err
	}
	return m.mb.Drain(h, limit)
}

// cycle counts one draining cycle (Drain's, or a MailboxActor's DoWork) and
// runs the heartbeat every HeartbeatCycles of them.
func (m *Mailbox) cycle() error {
	m.cycles++
	if m.cycles < m.hbCycles {
		return nil
	}
	m.cycles = 0
	return m.tick(false)
}

// Heartbeat refreshes the consumer heartbeat, the file's owner heartbeat
// and the mirrored counters now. Drain does it on its own; an owner that
// drains less often than ConsumerTimeout/HeartbeatCycles calls it from its
// duty cycle. Owner only, from the draining goroutine.
func (m *Mailbox) Heartbeat() error {
	if !m.owner {
		return fmt.Errorf("%w: %s: mailbox heartbeat", ErrNotOwner, m.Path())
	}
	if m.closed.Load() {
		return mailbox.ErrClosed
	}
	return m.tick(true)
}

// tick is the owner's heartbeat (draining goroutine only).
//
// Ordering: the consumer heartbeat is the ring's release store (Agrona's
// putLongOrdered); senders load it atomically and only compare it with
// their clock, so it orders nothing else.
func (m *Mailbox) tick(force bool) error {
	// Once in HeartbeatCycles drains: a corrupt state word is reported
	// rather than drained under (messages stay queued, none is dropped).
	if err := m.stateErr(); err != nil {
		return err
	}
	now := m.epochMs()
	if now != m.lastHb || force {
		m.ring.SetConsumerHeartbeatTime(now)
		m.lastHb = now
		m.mirror(now)
	}
	if now-m.lastFile >= m.fileHbMs || now < m.lastFile || force {
		m.lastFile = now
		return m.file.Heartbeat(now)
	}
	return nil
}

// mirror copies the statistics into the counters file, if any.
func (m *Mailbox) mirror(now int64) {
	if m.ctrs == nil {
		return
	}
	c := m.mb.Counters()
	m.ctrs.depth.Set(int64(m.ring.Size()))
	m.ctrs.backPressured.Set(c.BackPressured.Load())
	m.ctrs.torn.Set(c.Torn.Load())
	m.ctrs.corrupt.Set(c.Corrupt.Load())
	m.ctrs.heartbeat.Set(now)
}

// Close releases the Mailbox. For a sender it releases the file reference.
// For the owner it first closes the mailbox (mailbox Close(Drain), unless
// it was closed already: senders get mailbox.ErrClosed from then on),
// mirrors the final statistics and frees its counters, then closes the file
// (which marks the owner's heartbeat closed); messages still queued stay in
// the file and Close reports them with an error wrapping
// mailbox.ErrNotDrained. Idempotent. Afterwards the Mailbox's methods
// return mailbox.ErrClosed (see Mailbox for what they cannot guard).
func (m *Mailbox) Close() error {
	if !m.closing.CompareAndSwap(false, true) {
		return nil
	}
	if !m.owner {
		m.final = m.mb.Stats()
		m.closed.Store(true) // after final (Stats loads closed, then final)
		return m.ring.Close()
	}
	var errs []error
	if err := m.stateErr(); err != nil {
		errs = append(errs, err) // the word is left as it is: no state to raise it to
	} else if _, err := m.mb.Close(mailbox.Drain); err != nil {
		errs = append(errs, err)
	}
	if left := m.ring.Size(); left > 0 {
		errs = append(errs, fmt.Errorf("%w: %s: %d bytes queued at close", mailbox.ErrNotDrained, m.Path(), left))
	}
	if m.ctrs != nil {
		m.mirror(m.epochMs())
		errs = append(errs, m.ctrs.close())
	}
	m.final = m.mb.Stats()
	m.closed.Store(true) // after final (Stats loads closed, then final)
	errs = append(errs, m.ring.Close())
	return errors.Join(errs...)
}

// mailboxCounters are the owner's counters in a counters file.
type mailboxCounters struct {
	depth, backPressured, torn, corrupt, heartbeat *counters.Counter
}

func newMailboxCounters(mgr *counters.Manager, name string) (*mailboxCounters, error) {
	c := &mailboxCounters{}
	var pid [8]byte
	binary.LittleEndian.PutUint64(pid[:], uint64(os.Getpid()))
	specs := []struct {
		dst   **counters.Counter
		label string
		typ   int32
		key   []byte
	}{
		{&c.depth, "mailbox-depth: " + name, counters.TypeMailboxDepth, nil},
		{&c.backPressured, "back-pressure: " + name, counters.TypeBackPressureEvents, nil},
		{&c.torn, "unblocked-claims: " + name, counters.TypeUnblockedClaims, nil},
		{&c.corrupt, "torn-messages: " + name + " (corrupt records)", counters.TypeTornMessages, nil},
		{&c.heartbeat, fmt.Sprintf("heartbeat: mailbox %s consumer pid=%d", name, os.Getpid()), counters.TypeHeartbeat, pid[:]},
	}
	for _, s := range specs {
		ctr, err := mgr.Allocate(s.label, s.typ, s.key)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("ipc: mailbox %s: counter %q: %w", name, s.label, err), c.close())
		}
		*s.dst = ctr
	}
	return c, nil
}

func (c *mailboxCounters) close() error {
	var errs []error
	for _, ctr := range []*counters.Counter{c.depth, c.backPressured, c.torn, c.corrupt, c.heartbeat} {
		if ctr != nil {
			errs = append(errs, ctr.Close())
		}
	}
	return errors.Join(errs...)
}

// MailboxVersion returns the mailbox layout version stored in the header of
// f, a ring file: MailboxLayoutVersion for a mailbox, 0 for a plain ring
// (or a mailbox whose creator has not finished writing its header). It
// reads the word under f's fault guard; a file of another kind gives
// ErrKind. Tools such as dutystat use it to tell mailboxes from rings.
func MailboxVersion(f *File) (int32, error) {
	if f.Kind() != KindRing {
		return 0, fmt.Errorf("%w: %s is a file of kind %d, not a ring (%d)", ErrKind, f.Path(), f.Kind(), KindRing)
	}
	w, err := mailboxWordsOf(f)
	if err != nil {
		return 0, err
	}
	var v int32
	err = f.Guard(func() error {
		v = w.version.Load()
		return nil
	})
	return v, err
}
