package ipc

import (
	"context"
	"errors"
	"fmt"
	"github.com/dutyrt/duty/internal/ipcfile"
	"math"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/internal/pad"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/ringbuf"

	"github.com/dutyrt/duty/internal/mailboxdef"
	"github.com/dutyrt/duty/internal/mailboxframe"
	"github.com/dutyrt/duty/internal/mmapfile"
	"github.com/dutyrt/duty/internal/record"
)

// defaultConsumerTimeout is how old a mailbox's consumer heartbeat may
// grow before back-pressured senders report mailbox.ErrConsumerDead
// (Aeron's driver timeout; WithConsumerTimeout).
const defaultConsumerTimeout = 10 * time.Second

// consumerProbeEvery is how often a sender's view of a mailbox may ask
// whether its file was replaced or its consumer gone (stale, for a
// message.Registry's Lookup).
const consumerProbeEvery = time.Second

// probeEpoch is what consumer probes are timed from (monotonic).
var probeEpoch = time.Now()

// sinceProbeEpoch is the monotonic time since probeEpoch, in ns.
func sinceProbeEpoch() int64 { return int64(time.Since(probeEpoch)) }

// probeDue reports whether a probe paced by next may run now, and if so
// claims it: at most one per consumerProbeEvery among all goroutines.
func probeDue(next *atomic.Int64) bool {
	t, n := sinceProbeEpoch(), next.Load()
	return t >= n && next.CompareAndSwap(n, t+int64(consumerProbeEvery))
}

// mailboxReadyWait is how long after a file's creation OpenMailbox waits
// for its mailbox header (the creator writes it right after Create): a ring
// file older than that without one is not a mailbox.
const mailboxReadyWait = 5 * time.Second

// errNotMailbox reports a ring file without a mailbox header (a plain
// ring, or a creator that died before writing it). It wraps ErrKind.
var errNotMailbox = fmt.Errorf("ipc: not a mailbox: %w", ErrKind)

// MailboxFile is the file a mailbox lives in, as this process sees it: the
// handle CreateMailbox and OpenMailbox return beside the *mailbox.Mailbox,
// which is the ordinary mailbox with its ring and words in the file. The
// mailbox asks the file (its mailbox.Host) whether the consumer lives when
// it is full, and, in the owner, keeps the file's heartbeats from its
// drains. The handle keeps one reference to the file until Close.
//
// Its methods are safe for concurrent use.
type MailboxFile struct {
	_ pad.Pair // keep the read-only words away from a neighbour's hot data

	*File
	mb        *mailbox.Mailbox
	ring      *ringbuf.ManyToOne // a view of the mailbox's ring, for its consumer heartbeat word
	owner     bool
	timeoutMs int64
	epochMs   func() int64
	version   *atomic.Int32
	detach    func()

	// The owner's beat state (the draining goroutine).
	lastFile int64
	fileHbMs int64

	// A sender's probes of the consumer's process (consumerExited, stale):
	// the consumer's position when it last looked, the earliest time
	// (sinceProbeEpoch) of the next stale check, and what they found.
	lastHead          atomic.Int64
	nextStale         atomic.Int64
	exited, staleSeen atomic.Bool
	exitErr           atomic.Pointer[error] // CheckConsumer's error once exited
	// state is the mailbox's shared state word, which a sender that
	// proved the consumer's process gone raises to
	// mailboxdef.StateConsumerDead.
	state *atomic.Int64

	closing atomic.Bool
	closed  atomic.Bool
	_       pad.Pair
}

// mailboxHeaderOf returns f's mailbox header words (in spare slot 0).
func mailboxHeaderOf(f *File) (ipcfile.MailboxHeader, error) {
	b, err := f.spareSlotAt(ipcfile.MailboxHeaderSlot)
	if err != nil {
		return ipcfile.MailboxHeader{}, err
	}
	h, err := ipcfile.MailboxHeaderOf(b)
	if err != nil {
		return h, fmt.Errorf("%w: %s: spare slot %d: %w", ErrCorrupt, f.Path(), ipcfile.MailboxHeaderSlot, err)
	}
	return h, nil
}

// mailboxWords returns the spare slots that hold the mailbox's shared
// words.
func mailboxWords(f *File) ([]byte, error) {
	if err := f.live(); err != nil {
		return nil, err
	}
	o := ipcfile.SpareSlot(ipcfile.MailboxWordsSlot)
	return f.data[o : o+mailbox.WordsLength : o+mailbox.WordsLength], nil
}

var _ [ipcfile.SpareSlotCount*ipcfile.SpareSlotLength - (ipcfile.MailboxWordsSlot*ipcfile.SpareSlotLength + mailbox.WordsLength)]struct{} // the words fit in the spare slots

// CreateMailbox creates dir/name as a mailbox file and returns the mailbox,
// with this process as its consumer (the owner, which drains it), and the
// file's handle. cfg is the mailbox's configuration, as for mailbox.New
// (its Host must be nil: the file is the host); its Capacity sizes the
// ring in the file. opts are Create's (WithMode,
// WithLivenessTimeout, WithReplaceStale, WithClock, ...) and
// WithConsumerTimeout and WithCounters. WithClock is the mailbox's clock
// too, unless cfg.Clock is set: its heartbeats and the file's come from one
// clock.
//
// The file is a KindRing file whose ring holds the messages; the
// mailbox's limits and consumer timeout live in a header in the file's
// spare slots, stored before its version, which OpenMailbox waits for; the
// mailbox's state word and statistics live there too (mailbox.WordsLength
// bytes), so that every process sees a Close and the same totals. The
// consumer heartbeat (the ring's consumerHeartbeat word, epoch ms) starts
// at the creation time; the mailbox's drains refresh it.
func CreateMailbox(dir, name string, cfg mailbox.Config, opts ...Option) (*mailbox.Mailbox, *MailboxFile, error) {
	c := newConfig(opts)
	if cfg.Capacity == 0 {
		cfg.Capacity = mailboxdef.DefaultCapacity
	}
	if c.consumerTimeout == 0 {
		c.consumerTimeout = defaultConsumerTimeout
	}
	unblock := cfg.UnblockTimeout
	if unblock == 0 {
		unblock = mailboxdef.DefaultUnblockTimeout
	}
	switch {
	case cfg.Host != nil:
		return nil, nil, fmt.Errorf("%w: mailbox %s: a Config with a Host (the file is the mailbox's host)", ErrArgument, name)
	case cfg.Capacity < mailboxdef.MinCapacity || cfg.Capacity&(cfg.Capacity-1) != 0 || cfg.Capacity > math.MaxInt32:
		return nil, nil, fmt.Errorf("%w: mailbox capacity %d is not a power of two >= %d", ErrArgument, cfg.Capacity, mailboxdef.MinCapacity)
	case c.consumerTimeout < time.Millisecond || c.consumerTimeout.Milliseconds() > ipcfile.MaxMailboxTimeoutMs:
		return nil, nil, fmt.Errorf("%w: consumer timeout %s (1 ms to 24 h)", ErrArgument, c.consumerTimeout)
	case unblock < time.Millisecond || unblock.Milliseconds() > ipcfile.MaxMailboxTimeoutMs:
		return nil, nil, fmt.Errorf("%w: unblock timeout %s (1 ms to 24 h)", ErrArgument, unblock)
	case cfg.MaxParts > ipcfile.MaxMailboxParts:
		return nil, nil, fmt.Errorf("%w: %d parts, at most %d", ErrArgument, cfg.MaxParts, ipcfile.MaxMailboxParts)
	case c.counters != nil && c.counters.Manager() == nil:
		return nil, nil, fmt.Errorf("%w: counters file %s is not owned by this process", ErrArgument, c.counters.File.Path())
	}
	if cfg.Name == "" {
		cfg.Name = name
	}
	f, err := create(dir, name, KindRing, []int{cfg.Capacity + ringbuf.TrailerLength}, opts...)
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*mailbox.Mailbox, *MailboxFile, error) {
		return nil, nil, errors.Join(err, f.Remove(), f.Close())
	}
	hdr, err := mailboxHeaderOf(f)
	if err != nil {
		return fail(err)
	}
	if cfg.Clock == nil {
		cfg.Clock = c.clock // one clock for the mailbox's heartbeats and the file's
	}
	mf := newMailboxFile(f, hdr, true, c.consumerTimeout.Milliseconds(), cfg.Clock)
	// The file heartbeat is an fstat and a guarded store: a few times per
	// liveness timeout is enough.
	mf.fileHbMs = max(min(c.consumerTimeout, f.livenessTimeout()).Milliseconds()/8, 1)
	cfg.UnblockTimeout = unblock
	cfg.Host = (*mailboxHost)(mf)
	if c.counters != nil {
		cfg.Counters = c.counters.Manager()
	}
	mb, err := mailbox.New(cfg)
	if err != nil {
		if errors.Is(err, counters.ErrFull) {
			return fail(err)
		}
		return fail(fmt.Errorf("%w: %w", ErrArgument, err))
	}
	// The parameters, then the first heartbeat, then the version (atomic,
	// last): a sender that loads a non-zero version sees the rest.
	hdr.MaxMessage.Store(int64(mb.MaxMessageSize()))
	hdr.MaxParts.Store(int64(mb.MaxParts()))
	hdr.ConsumerTimeout.Store(c.consumerTimeout.Milliseconds())
	hdr.UnblockTimeout.Store(unblock.Milliseconds())
	if cfg.Checksum {
		hdr.Flags.Store(ipcfile.MailboxFlagChecksum)
	}
	now := mf.epochMs()
	mf.ring.SetConsumerHeartbeatTime(now)
	mf.lastFile = now
	hdr.Version.Store(ipcfile.MailboxLayoutVersion)
	return mb, mf, nil
}

func newMailboxFile(f *File, hdr ipcfile.MailboxHeader, owner bool, timeoutMs int64, clk clock.Clock) *MailboxFile {
	return &MailboxFile{
		File:      f,
		owner:     owner,
		timeoutMs: timeoutMs,
		epochMs:   clk.EpochMillis,
		version:   hdr.Version,
	}
}

// OpenMailbox opens the mailbox file at path as a sender: the mailbox it
// returns only sends (mailbox.ErrNotConsumer for Drain and the consumer's
// other operations). opts are Open's and OpenRing's (WithWaitForFile,
// WithClock, ...). It waits, until ctx ends, for a
// mailbox header still being written, then checks it: a ring file without
// one gives ErrKind ("not a mailbox"), a newer mailbox version an error matching
// ErrVersion, values no creator writes ErrCorrupt. A mailbox already
// closed gives an error matching mailbox.ErrClosed, one whose consumer
// heartbeat is stale mailbox.ErrConsumerDead. The sender uses the limits
// the consumer stored; its name is the file's name.
//
// WithClock sets the clock the consumer heartbeat is compared with.
func OpenMailbox(ctx context.Context, path string, opts ...Option) (*mailbox.Mailbox, *MailboxFile, error) {
	c := newConfig(opts)
	f, err := open(ctx, path, opts...)
	if err != nil {
		return nil, nil, err
	}
	mb, mf, err := openMailbox(ctx, f, c)
	if err != nil {
		return nil, nil, errors.Join(err, f.Close())
	}
	return mb, mf, nil
}

func openMailbox(ctx context.Context, f *File, c config) (*mailbox.Mailbox, *MailboxFile, error) {
	if f.Kind() != KindRing {
		return nil, nil, fmt.Errorf("%w: %s has kind %d, want %d (ring)", errNotMailbox, f.Path(), f.Kind(), KindRing)
	}
	hdr, err := mailboxHeaderOf(f)
	if err != nil {
		return nil, nil, err
	}
	var first time.Time // when this opener first found no header
	for {
		v := hdr.Version.Load() // acquires the creator's stores before it
		if v > ipcfile.MailboxLayoutVersion || v < 0 || (v != 0 && v < ipcfile.MailboxLayoutVersion) {
			return nil, nil, fmt.Errorf("%w: %s: mailbox layout version %d, this build reads %d", ErrVersion, f.Path(), v, ipcfile.MailboxLayoutVersion)
		}
		if v != 0 {
			break
		}
		hb, _ := f.heartbeatMillis()
		now := c.now()
		if first.IsZero() {
			first = now
		}
		// The wait is bounded by the file's age and by this opener's own
		// wait: a creation time in the future (a corrupt header, or a
		// creator whose clock is ahead) must not make it wait for ever.
		age, waited := now.Sub(time.UnixMilli(f.hdr.Created)), now.Sub(first)
		if age > mailboxReadyWait || waited > mailboxReadyWait || hb == ipcfile.HeartbeatClosed {
			return nil, nil, fmt.Errorf("%w: %s has no mailbox ipcfile.Header (created %s ago, waited %s)",
				errNotMailbox, f.Path(), age.Round(time.Millisecond), waited.Round(time.Millisecond))
		}
		if werr := mmapfile.Wait(ctx, c.pollInterval); werr != nil {
			return nil, nil, fmt.Errorf("%w: %s: mailbox ipcfile.Header not written yet: %w", ErrNotReady, f.Path(), werr)
		}
	}
	maxMessage, maxParts := hdr.MaxMessage.Load(), hdr.MaxParts.Load()
	timeoutMs, unblockMs, flags := hdr.ConsumerTimeout.Load(), hdr.UnblockTimeout.Load(), hdr.Flags.Load()
	ringLen := f.hdr.Sections[0].Length - ringbuf.TrailerLength
	switch {
	case maxMessage < 1 || maxMessage > ringLen:
		return nil, nil, fmt.Errorf("%w: %s: mailbox max message size %d", ErrCorrupt, f.Path(), maxMessage)
	case maxParts < 1 || maxParts > ipcfile.MaxMailboxParts:
		return nil, nil, fmt.Errorf("%w: %s: mailbox max parts %d", ErrCorrupt, f.Path(), maxParts)
	case timeoutMs < 1 || timeoutMs > ipcfile.MaxMailboxTimeoutMs, unblockMs < 1 || unblockMs > ipcfile.MaxMailboxTimeoutMs:
		return nil, nil, fmt.Errorf("%w: %s: mailbox timeouts %d ms (consumer), %d ms (unblock)", ErrCorrupt, f.Path(), timeoutMs, unblockMs)
	case flags&^ipcfile.MailboxFlagChecksum != 0:
		return nil, nil, fmt.Errorf("%w: %s: mailbox flags %#x", ErrCorrupt, f.Path(), flags)
	}
	mf := newMailboxFile(f, hdr, false, timeoutMs, c.clock)
	mb, err := mailbox.New(mailbox.Config{
		Name:           filepath.Base(f.Path()),
		Clock:          c.clock,
		MaxMessageSize: int(maxMessage),
		MaxParts:       int(maxParts),
		UnblockTimeout: time.Duration(unblockMs) * time.Millisecond,
		Checksum:       flags&ipcfile.MailboxFlagChecksum != 0,
		Host:           (*mailboxHost)(mf),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s: mailbox header: %w", ErrCorrupt, f.Path(), err)
	}
	if err := mb.Err(); err != nil { // ErrClosed, or the corruption of a word that holds no state
		mf.detach()
		return nil, nil, fmt.Errorf("%w: %s", err, f.Path())
	}
	if err := mf.CheckConsumer(); err != nil {
		mf.detach()
		return nil, nil, err
	}
	return mb, mf, nil
}

// mailboxHost is a MailboxFile seen as its mailbox's mailbox.Host: the
// methods only the mailbox calls.
type mailboxHost MailboxFile

var _ mailbox.Host = (*mailboxHost)(nil)

// Attach gives the mailbox the file's ring section and its shared words.
func (h *mailboxHost) Attach(m *mailbox.Mailbox, detach func()) (mailbox.Placement, error) {
	f := h.File
	ring, err := f.Section(0)
	if err != nil {
		return mailbox.Placement{}, err
	}
	words, err := mailboxWords(f)
	if err != nil {
		return mailbox.Placement{}, err
	}
	r, err := ringbuf.NewManyToOne(ring)
	if err != nil {
		return mailbox.Placement{}, fmt.Errorf("%w: %s: %w", ErrCorrupt, f.Path(), err)
	}
	ws, err := atomicbuf.New(words)
	if err != nil {
		return mailbox.Placement{}, fmt.Errorf("%w: %s: %w", ErrCorrupt, f.Path(), err)
	}
	h.mb, h.ring, h.detach = m, r, detach
	h.state = ws.Int64At(mailboxdef.StateOffset)
	// The first CheckConsumer (OpenMailbox's) finds the position where it
	// was, and probes the process.
	h.lastHead.Store(r.ConsumerPosition())
	return mailbox.Placement{Ring: ring, Words: words, SendOnly: !h.owner}, nil
}

// CheckConsumer is MailboxFile.CheckConsumer.
func (h *mailboxHost) CheckConsumer() error { return (*MailboxFile)(h).CheckConsumer() }

// Beat is the owner's side of a consumer heartbeat (the draining
// goroutine): the counters file, if any, once per millisecond, and the
// file's owner heartbeat a few times per timeout (File.Heartbeat: an fstat
// that also catches a truncated file, whose error the drain returns).
func (h *mailboxHost) Beat(now int64, force bool) error {
	m := (*MailboxFile)(h)
	if now-m.lastFile >= m.fileHbMs || now < m.lastFile || force {
		m.lastFile = now
		return m.File.Heartbeat(now)
	}
	return nil
}

// isOwner reports whether this process created the file: the consumer.
func (m *MailboxFile) isOwner() bool { return m.owner }

// consumerTimeout returns the consumer timeout stored in the file.
func (m *MailboxFile) consumerTimeout() time.Duration {
	return time.Duration(m.timeoutMs) * time.Millisecond
}

// consumerHeartbeat returns the consumer's last heartbeat (epoch ms), or
// 0 after Close (the file is unmapped).
func (m *MailboxFile) consumerHeartbeat() int64 {
	if m.closed.Load() {
		return 0
	}
	return m.ring.ConsumerHeartbeatTime()
}

// CheckConsumer returns nil when the consumer drains, and otherwise an
// error wrapping mailbox.ErrConsumerDead that describes the owner's
// process (and wraps ErrOwnerDead when it is gone or closed the file). The
// consumer is dead when its heartbeat is older than the consumer timeout
// (or further in the future): a hung process. In a sender it is also dead
// when its process is provably gone, whatever its heartbeat: nobody holds
// the file's lock (which the consumer holds until it closes the file, and
// the kernel drops when it dies) and no process with the owner's pid and
// start time runs. The sender then raises the mailbox's state word
// (mailboxdef.StateConsumerDead), so that every send, in every process,
// is refused with mailbox.ErrConsumerDead at once; a gone process is
// remembered.
//
// That probe runs whenever the consumer's position has not moved since
// this view last looked, the first call included: while the consumer
// holds its lock it is one flock(2) that fails. The mailbox calls
// CheckConsumer when it is full, while a SendContext waits, and after
// each send whose record holds the start of an eighth of the ring, so a sender learns of a
// killed consumer within two eighths of the ring of sending (before the
// ring is full, unless it was nearly full when the consumer died) or at
// its next refusal. Any goroutine may call it.
func (m *MailboxFile) CheckConsumer() error {
	if m.closed.Load() {
		return mailbox.ErrClosed
	}
	if m.exited.Load() {
		if e := m.exitErr.Load(); e != nil {
			return *e
		}
	}
	exited := m.consumerExited()
	now := m.epochMs()
	hb := m.ring.ConsumerHeartbeatTime()
	if age := now - hb; age <= m.timeoutMs && age >= -m.timeoutMs && !exited {
		return nil
	}
	err := m.deadConsumer(now, hb)
	if exited {
		// Said once, then returned as it is: the mailbox asks again for
		// every send it refuses (its state word says the consumer is
		// gone), and that must cost no system call or allocation.
		m.exitErr.CompareAndSwap(nil, &err)
	}
	return err
}

// consumerExited reports, in a sender, whether the consumer's process is
// provably gone (File.ownerExited), asking only when the consumer's
// position has not moved since this view last looked, and remembering a
// yes (sawExit).
func (m *MailboxFile) consumerExited() bool {
	if m.owner {
		return false
	}
	if m.exited.Load() {
		return true
	}
	if h := m.ring.ConsumerPosition(); m.lastHead.Swap(h) != h || !m.File.ownerExited() {
		return false
	}
	m.sawExit()
	return true
}

// sawExit remembers that the consumer's process is gone and raises the
// mailbox's state word from open to mailboxdef.StateConsumerDead (a
// closed mailbox stays closed). The compare-and-swap is sequentially
// consistent, as Close's: a send whose claim's load of the state came
// after it aborts the claim and is refused; one whose load came before it
// published its message, which is then counted in Stats.Stranded.
func (m *MailboxFile) sawExit() {
	m.exited.Store(true)
	m.state.CompareAndSwap(mailboxdef.StateOpen, mailboxdef.StateConsumerDead)
}

// stale reports whether this sender's mailbox no longer reaches a consumer
// by its name: the consumer's process is provably gone (as for
// CheckConsumer), it closed the file, or the path now names another file
// (a restarted consumer's). A message.Registry asks it at every Lookup of
// a mailbox it opened and opens the name again once it is stale. It looks
// at most once per consumerProbeEvery (in between it costs a clock read)
// and, once stale, stays so; false in the owner.
func (m *MailboxFile) stale() bool {
	if m.staleSeen.Load() || m.closed.Load() || m.exited.Load() {
		return true
	}
	if m.owner || !probeDue(&m.nextStale) {
		return false
	}
	hb, err := m.File.heartbeatMillis()
	if err != nil || hb == ipcfile.HeartbeatClosed || m.File.replaced() {
		m.staleSeen.Store(true)
		return true
	}
	if m.File.ownerExited() {
		m.sawExit()
		m.staleSeen.Store(true)
		return true
	}
	return false
}

func (m *MailboxFile) deadConsumer(now, hb int64) error {
	l, err := m.File.Liveness(time.UnixMilli(now), 0)
	if err != nil {
		return fmt.Errorf("%w: %s: consumer heartbeat %d ms old (timeout %d ms): %w", mailbox.ErrConsumerDead, m.File.Path(), now-hb, m.timeoutMs, err)
	}
	if m.exited.Load() || l.State == OwnerDead || l.State == OwnerClosed {
		return fmt.Errorf("%w: %s: the consumer's process is gone (consumer heartbeat %d ms old, timeout %d ms): %w: %s", mailbox.ErrConsumerDead, m.File.Path(), now-hb, m.timeoutMs, ErrOwnerDead, l.describe())
	}
	if !l.Running {
		return fmt.Errorf("%w: %s: consumer heartbeat %d ms old (timeout %d ms), its process not visible: %w: %s", mailbox.ErrConsumerDead, m.File.Path(), now-hb, m.timeoutMs, ErrOwnerDead, l.describe())
	}
	return fmt.Errorf("%w: %s: consumer heartbeat %d ms old (timeout %d ms), its process still runs (hung or not draining): %s", mailbox.ErrConsumerDead, m.File.Path(), now-hb, m.timeoutMs, l.describe())
}

// Close releases the file. In a sender it detaches the mailbox from the
// file (its methods return mailbox.ErrClosed from then on) and releases
// the file reference. In the owner it first closes the mailbox
// (Close(Drain), unless it was closed already: senders everywhere get
// mailbox.ErrClosed from then on), publishes the final statistics and
// frees its counters, then detaches it and closes the file (which marks
// the owner's heartbeat closed); messages still queued stay in the file
// and Close reports them with an error wrapping mailbox.ErrNotDrained.
// Idempotent.
//
// Close once this process has stopped using the mailbox (its actor's
// runner closed, its senders returned): a call racing Close may touch the
// unmapped file and fault; calls after it return mailbox.ErrClosed.
func (m *MailboxFile) Close() error {
	if !m.closing.CompareAndSwap(false, true) {
		return nil
	}
	var errs []error
	if m.owner {
		if _, err := m.mb.Close(mailbox.Drain); err != nil && !errors.Is(err, mailbox.ErrClosed) {
			errs = append(errs, err) // a corrupt word is left as it is: no state to raise it to
		}
		if left := m.mb.Stats().Depth; left > 0 {
			errs = append(errs, fmt.Errorf("%w: %s: %d bytes queued at close", mailbox.ErrNotDrained, m.File.Path(), left))
		}
		errs = append(errs, m.mb.CloseCounters())
	}
	m.detach()
	m.closed.Store(true)
	errs = append(errs, m.File.Close())
	return errors.Join(errs...)
}

// MailboxInfo is what InspectMailbox reads of a mailbox file from
// outside, without joining it as a sender or consumer.
type MailboxInfo struct {
	// Version is the mailbox layout version (2 today; docs/ipc.md,
	// "Mailbox file"), or 0 for a plain ring or a mailbox whose creator
	// has not finished writing its header; the other fields are then
	// zero.
	Version int32
	// Closed reports a mailbox that refuses sends: closed by its consumer,
	// or its consumer proved dead.
	Closed bool
	// ConsumerDead reports that a Host proved the consumer's process gone:
	// every send is refused with mailbox.ErrConsumerDead.
	ConsumerDead bool
	// Stranded counts the messages queued in a mailbox whose consumer is
	// dead: accepted by senders before its death was known, never to be
	// delivered (the senders' mailbox.Stats.Stranded, as any process can
	// read it). 0 while the consumer lives.
	Stranded int64
}

// InspectMailbox reads f, a ring file, as a mailbox: its layout version,
// whether it refuses sends, and what a dead consumer stranded in it. It
// reads under f's fault guard and trusts nothing it reads: a state word
// no mailbox writes, or a ring whose capacity is not a power of two, is
// ErrCorrupt; a file of another kind is ErrKind. Tools such as dutystat
// use it to tell mailboxes from rings and to count stranded messages where
// an operator looks.
func InspectMailbox(f *File) (MailboxInfo, error) {
	var info MailboxInfo
	if f.Kind() != KindRing {
		return info, fmt.Errorf("%w: %s is a file of kind %d, not a ring (%d)", ErrKind, f.Path(), f.Kind(), KindRing)
	}
	hdr, err := mailboxHeaderOf(f)
	if err != nil {
		return info, err
	}
	ring, err := f.Section(0)
	if err != nil {
		return info, err
	}
	words, err := mailboxWords(f)
	if err != nil {
		return info, err
	}
	err = f.Guard(func() error {
		if info.Version = hdr.Version.Load(); info.Version == 0 {
			return nil
		}
		ws, err := atomicbuf.New(words)
		if err != nil {
			return err
		}
		switch st := ws.Int64At(mailboxdef.StateOffset).Load(); st {
		case mailboxdef.StateOpen:
		case mailboxdef.StateDrain, mailboxdef.StateDiscard:
			info.Closed = true
		case mailboxdef.StateConsumerDead:
			info.Closed, info.ConsumerDead = true, true
		default:
			return fmt.Errorf("%w: %s: mailbox state word %d", ErrCorrupt, f.Path(), st)
		}
		if !info.ConsumerDead {
			return nil
		}
		capacity := len(ring) - ringbuf.TrailerLength
		if capacity < mailboxdef.MinCapacity || capacity&(capacity-1) != 0 {
			return fmt.Errorf("%w: %s: ring of %d bytes", ErrCorrupt, f.Path(), len(ring))
		}
		b, err := atomicbuf.New(ring)
		if err != nil {
			return err
		}
		tr := record.TrailerOf(b, capacity)
		over := 0
		if hdr.Flags.Load()&ipcfile.MailboxFlagChecksum != 0 {
			over = mailboxdef.ChecksumLength
		}
		log := record.NewLog(ring[:capacity])
		info.Stranded = mailboxframe.Messages(&log, tr.Head.Load(), tr.Tail.Load(), over)
		return nil
	})
	if err != nil {
		return MailboxInfo{}, err
	}
	return info, nil
}
