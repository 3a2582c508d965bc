package mailbox

import (
	"fmt"
	"math"

	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/internal/mailboxframe"
	"github.com/dutyrt/duty/internal/record"
)

// Action is a Handler's decision about the message it was given, with
// Agrona's controlled-read semantics (the same type as ringbuf.Action).
type Action = record.Action

const (
	// Abort leaves the message (all its records) in the mailbox and ends
	// the drain: the next Drain delivers it again. It is the back-pressure
	// idiom of an agent whose downstream is full.
	Abort = record.Abort
	// Break consumes the message and ends the drain.
	Break = record.Break
	// Commit consumes the message, releases the space of everything
	// drained so far to the senders at once, and continues.
	Commit = record.Commit
	// Continue consumes the message and continues; space is released when
	// the drain ends.
	Continue = record.Continue
)

// recordHandler is the record core's controlled-read handler: the type id
// and payload of one record.
type recordHandler = func(recordType int32, payload []byte) Action

// Handler receives one message from Drain and decides what happens to it.
// The Message and every slice it returns are valid only during the call.
//
// A handler must not consume from its own mailbox: no Drain,
// Close(Discard) of the mailbox being drained (Close(Drain)
// and sends are fine). The ring stops a read whose handler read from the
// same ring (ringbuf's Read), so the outer Drain returns when the handler
// does instead of moving the head back; but the inner call releases (and
// zeroes) the space of the handler's message, whose bytes then change under
// the handler, reuses the reassembly buffer, and makes Stats count its
// messages twice. To close from a handler, call Close(Drain) (or set a
// flag) and Close(Discard) after Drain returns.
type Handler func(m *Message) Action

// The liveness check's periods, in drains without progress (see Drain).
// claimCheckPeriod is a power of two: the drain tests it with a mask.
const (
	claimCheckPeriod = 64
	stallCheckPeriod = 1024
)

var _ [claimCheckPeriod & (claimCheckPeriod - 1)]struct{} = [0]struct{}{}

// consumer is the state of the draining goroutine.
type consumer struct {
	// Hot: touched by every Drain call, kept together.
	onRecord    recordHandler
	h           Handler
	count       int  // messages consumed (delivered or discarded) in this call, counted after each ring read
	calls       int  // handler calls in this call: what it delivered if a handler panics (see Drain)
	interrupted bool // a Drain is running, or the last one was interrupted by a handler's panic
	extra       int  // records the ring counted in this read that are not messages (later records of a framed message, dropped records)
	stop        bool
	discard     bool
	plainReady  bool // a plain record can take the fast path: not checksummed, not discarding, nothing pending, msg is one part
	idleDrains  int  // drains without progress since the last liveness check
	claimMask   int  // claimCheckPeriod-1 (a power of two); 0 once detached, so that every idle poll drains
	stallSince  int64
	// Totals of the single-writer counters, loaded from them by New.
	maxDepth, totalDelivered int64
	msg                      Message
	// DrainTo's Receiver (when set, it is called instead of h) and what
	// it reported in this call.
	recv         Receiver
	onRecordRecv recordHandler // onRecord for a Receiver
	onRecordDisp recordHandler // onRecord for a Dispatcher
	recvRecord   recordHandler // the one of the two for recv
	disp         Dispatcher    // recv, if it is one
	routeType    int32         // the type id route was asked for (0: none)
	route        Receiver
	failed       int
	firstFailure error
	beats        int   // drains since the last heartbeat
	lastBeat     int64 // the last consumer heartbeat stored (epoch ms)

	// Per call, rare: zeroed when flushed to the counters.
	discarded int64
	corrupt   int64
	reason    string

	// The ring's consumer: the record core's read loops over the
	// mailbox's ring (its Log, the records, also serves the read-ahead of
	// a framed message (mailboxframe.Assemble) and claimAt).
	rd record.Reader

	// Cold.
	mb             *Mailbox
	parts          [][]byte
	reasm          []byte
	pending        pending
	totalDiscarded int64
	stallHead      int64 // head position while a stall is timed (since stallSince, a clock reading; 0: none)
	lastDepth      int   // Stats.Depth when the mailbox was detached
	lastStranded   int64 // and Stats.Stranded
	// Damage at the head (recoverDamage): where, since when (a clock
	// reading; 0: none) and the tail then.
	damageHead, damageSince, damageTail int64
}

// pending is a multi-record message delivered at its first record whose
// later records the ring's read has yet to consume.
type pending struct {
	active     bool
	recordType int32
	hdr        mailboxframe.Header
	next       uint32 // index of the next record expected
	final      Action // what to return at its last record
}

func (c *consumer) init(m *Mailbox) {
	c.mb = m
	// Bound once: Drain passes it without allocating. A plain record, the
	// common case, is delivered here without the general classification.
	c.onRecord = func(recordType int32, payload []byte) Action {
		if c.plain(recordType, payload) {
			return c.settled(c.h(&c.msg))
		}
		return c.general(recordType, payload)
	}
	// The same for a Receiver (DrainTo, an actor of a Receiver): a closure
	// of its own, so that the Handler's stays small. Each closure keeps the
	// plain record's delivery in its own body, the per-message path of the
	// drain; the helpers they share (plain, received, settled) are inlined,
	// so a message costs no call beyond its handler's.
	c.onRecordRecv = func(recordType int32, payload []byte) Action {
		if c.plain(recordType, payload) {
			return c.settled(c.received(c.recv.Receive(&c.msg)))
		}
		return c.general(recordType, payload)
	}
	// The same for a Dispatcher: the route of the record's type, asked
	// once per run of that type, is called directly.
	c.onRecordDisp = func(recordType int32, payload []byte) Action {
		if c.plain(recordType, payload) {
			if recordType != c.routeType {
				c.route, c.routeType = c.disp.Route(recordType), recordType
			}
			return c.settled(c.received(c.route.Receive(&c.msg)))
		}
		return c.general(recordType, payload)
	}
	c.parts = make([][]byte, 0, min(m.maxParts, 16))
	c.msg.parts = c.msg.one[:]
	c.claimMask = claimCheckPeriod - 1
	c.maxDepth = m.w.maxDepth.Load()
	c.totalDelivered = m.w.delivered.Load()
	c.totalDiscarded = m.w.discarded.Load()
}

// plain points the message at a plain record for a record closure's fast
// path and counts the call; false means the record takes the general path.
// It is inlined into the closures.
func (c *consumer) plain(recordType int32, payload []byte) bool {
	if !c.plainReady || recordType > MaxTypeID {
		return false
	}
	c.msg.typeID = recordType
	c.msg.one[0] = payload
	c.calls++
	return true
}

// settled takes a fast-path delivery's action: Continue as it is, any
// other through settle. It is inlined into the closures.
func (c *consumer) settled(a Action) Action {
	if a != Continue {
		return c.settle(a)
	}
	return Continue
}

// received reports a Receiver's error (fail) and returns its action. It is
// inlined into the closures.
func (c *consumer) received(a Action, err error) Action {
	if err != nil {
		c.fail(err)
	}
	return a
}

// general is the record closures' path for every record but a plain one
// they deliver themselves: the classification of record, and whether the
// next one can take the fast path.
func (c *consumer) general(recordType int32, payload []byte) Action {
	a := c.record(recordType, payload)
	c.plainReady = c.fastPath()
	return a
}

// fastPath reports whether the next plain record can be delivered by
// onRecord's fast path: nothing is discarded or pending and the message is
// one part. Never in a checksummed mailbox: there every record, a plain
// one too, must pass unseal first, or a record without a checksum (the
// bytes inside another record, reached through a damaged length) would be
// delivered unchecked.
func (c *consumer) fastPath() bool {
	return !c.mb.checksum && !c.discard && !c.msg.framed && !c.pending.active
}

// maxRingReads bounds the ring reads of one Drain (see the loop).
const maxRingReads = 16

// Drain delivers up to limit messages to h, in order, from the goroutine
// that owns the mailbox (exactly one goroutine may drain), and returns the
// number consumed: delivered and not aborted, or discarded after
// Close(Discard). Records that are not messages do not count against limit
// (up to a bound of ring reads per call). h decides per message (Action).
// A multipart or fragmented message is delivered whole, once all its
// records are in the ring; Abort leaves them all for the next Drain. A
// handler that panics consumes its message; the panic propagates, and the
// next Drain counts what the interrupted one delivered in Stats.Delivered.
//
// Drain also keeps the consumer alive: every Config.HeartbeatCycles calls
// it stores the consumer heartbeat (and runs the Host's Beat, whose error
// it returns without draining), and it releases an open claim that has not
// moved for Config.UnblockTimeout (counted in Stats.Torn). Records with
// invalid framing are dropped, counted in Stats.Corrupt and reported by an
// error wrapping ErrCorruptFrame after the rest has been delivered. A view
// that only sends returns ErrNotConsumer.
func (m *Mailbox) Drain(h Handler, limit int) (int, error) {
	if h == nil {
		return 0, errNilHandler
	}
	if m.sendOnly {
		return 0, errNotConsumer(m, "Drain")
	}
	return m.cycle(h, nil, limit)
}

// cycle is one consumer cycle, for Drain and DrainTo: countCycle, then
// drainInto. An actor's DoWork makes the same calls, with its idle poll
// between them.
func (m *Mailbox) cycle(h Handler, r Receiver, limit int) (int, error) {
	if err := m.countCycle(); err != nil {
		return 0, err
	}
	return m.drainInto(h, r, limit)
}

// countCycle counts a consumer cycle and runs the heartbeat when it is
// due (every Config.HeartbeatCycles cycles); small enough to inline.
func (m *Mailbox) countCycle() error {
	c := &m.cons
	c.beats++
	if c.beats >= m.hbCycles {
		return m.beat(false)
	}
	return nil
}

// drainInto drains up to limit messages into h, or into r when it is not
// nil, and then returns r's failures with the drain's error.
func (m *Mailbox) drainInto(h Handler, r Receiver, limit int) (int, error) {
	if r != nil {
		m.cons.setReceiver(r)
		n, err := m.drain(m.cons.recvRecord, limit)
		return n, m.cons.takeFailures(err)
	}
	m.cons.h, m.cons.recv = h, nil
	return m.drain(m.cons.onRecord, limit)
}

// drainQueued drains everything queued now into h, or r (see drainInto).
func (m *Mailbox) drainQueued(h Handler, r Receiver) (int, error) {
	return m.drainInto(h, r, math.MaxInt)
}

// setReceiver makes r the Receiver of the next drain, and forgets the
// routes a Dispatcher gave for the last one.
func (c *consumer) setReceiver(r Receiver) {
	c.recv = r
	c.disp, _ = r.(Dispatcher)
	c.route, c.routeType = nil, 0
	c.recvRecord = c.onRecordRecv
	if c.disp != nil {
		c.recvRecord = c.onRecordDisp
	}
}

// drain is Drain without the heartbeat: an actor counts its duty cycles
// itself. onRecord is the consumer's onRecord, after its h was set, or
// its onRecordRecv, after its recv was set.
func (m *Mailbox) drain(onRecord recordHandler, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	st := m.w.state.Load()
	if st > stateDiscard || st < stateOpen {
		// Detached (the Host's memory is gone: ErrClosed), or a corrupt
		// word, reported rather than drained under: messages stay queued.
		return 0, m.stateErr(st)
	}
	c := &m.cons
	if c.interrupted {
		c.creditInterrupted()
	}
	c.interrupted, c.calls = true, 0
	// extra counts records of the current ring read that are not messages:
	// a handler that panicked left the last read's. discarded and corrupt
	// are zeroed at the end of a call; one whose handler panicked leaves
	// them to be counted and reported by this one.
	c.count, c.stop, c.extra = 0, false, 0
	c.discard = st == stateDiscard
	c.plainReady = c.fastPath()
	head0 := m.trailer.Head.Load() // consumer-owned word: no contention
	head := head0
	var depth int64 // the most one ring read consumed: all of it was queued when that read began
	var err error
	// A ring read stops at the end of the ring: when it got there, read
	// once more from the start. It also counts records that are not
	// messages (the rest of a message whose handler panicked, records
	// dropped as corrupt) against its limit: when they used it up, read
	// again, so that a message waiting behind them is not left for the next
	// Drain. Each read consumes something or ends the loop; the bound keeps
	// a sender that writes nothing but corrupt records from holding the
	// drain.
	for range maxRingReads {
		// The ring counts records, the drain messages: each message is at
		// least one record, so the ring's limit never lets the drain take
		// more than limit messages (a framed message can make it stop
		// before).
		want := limit - c.count
		k, rerr := c.read(onRecord, want)
		// Read again past records that were not messages only if they
		// used up the ring's limit: a read that stopped short found no
		// more (the common case of a framed message, whose later records
		// are such records, costs no second read).
		atLimit := k >= want
		if rerr == nil && c.pending.active {
			// The ring's limit stopped it inside a framed message delivered
			// at its first record: consume the rest of that message now (its
			// records are all there: one claim, one publication).
			var more int
			more, rerr = c.read(onRecord, int(c.pending.hdr.Count-c.pending.next))
			k += more
		}
		extra := c.extra
		c.count += k - extra
		c.extra = 0
		if rerr != nil {
			if !m.recoverDamage() {
				err = errCorruptRing(rerr)
				break
			}
			head = m.trailer.Head.Load()
			continue
		}
		prev := head
		head = m.trailer.Head.Load()
		depth = max(depth, head-prev)
		if c.stop || c.count >= limit || head == prev || ((extra == 0 || !atLimit) && head&int64(m.capacity-1) != 0) {
			break
		}
	}
	if head != head0 {
		c.stallSince, c.idleDrains = 0, 0
		// The backlog this drain saw: the most one ring read consumed (a
		// read never crosses the end of the ring, so all it consumed was
		// queued when it began; the sum of several reads while senders
		// refill is no one moment's backlog); when it stopped at its
		// limit, also what it left queued. Only then is the tail read: its
		// cache line belongs to the senders. A backlog never exceeds the
		// capacity; a tail another process scribbled over could say more.
		if c.count >= limit {
			depth = max(depth, m.trailer.Tail.Load()-head)
		}
		if d := min(depth, int64(m.capacity)); d > c.maxDepth {
			c.maxDepth = d
			atomicbuf.StoreRelease64(&m.w.maxDepth, d)
		}
	} else if !c.stop && err == nil {
		// Most drains without progress find an empty mailbox, or a claim
		// a sender is filling right now; the check must cost them nothing.
		// Every claimCheckPeriod-th one looks at the length at the head
		// (the line the ring's read just loaded): a negative length is an
		// open claim, whose timing starts, and goes on at that period
		// while it lasts: the clock is read only then. The tail (the
		// senders' cache line, which a read takes from the producer that
		// claims next) is read only when the head holds no claim, once in
		// stallCheckPeriod idle drains (a sender that died between its
		// claim and its first store leaves zeros, not a negative length).
		c.idleDrains++
		if c.idleDrains&c.claimMask == 0 {
			if marked := m.claimAt(head); marked || c.stallSince != 0 || c.idleDrains >= stallCheckPeriod {
				if c.idleDrains >= stallCheckPeriod {
					c.idleDrains = 0
				}
				err = m.checkStall(head, marked)
			}
		}
	}
	// Single-writer totals: a release store, not a locked add.
	if delivered := int64(c.count) - c.discarded; delivered > 0 {
		c.totalDelivered += delivered
		atomicbuf.StoreRelease64(&m.w.delivered, c.totalDelivered)
	}
	if c.discarded > 0 {
		c.totalDiscarded += c.discarded
		atomicbuf.StoreRelease64(&m.w.discarded, c.totalDiscarded)
		c.discarded = 0
	}
	if c.corrupt > 0 {
		m.w.corrupt.Add(c.corrupt)
		if err == nil {
			err = errCorruptFrames(c.corrupt, c.reason)
		}
		c.corrupt = 0
	}
	c.interrupted = false
	return c.count, err
}

// creditInterrupted counts what a Drain whose handler panicked delivered:
// the ring's count of a read is lost with the panic, but every handler
// call of that Drain consumed its message (a handler that aborts ends the
// drain, so none of them aborted; the panicking one is consumed by the
// ring's rule), and a discarding Drain calls no handler.
func (c *consumer) creditInterrupted() {
	c.interrupted = false
	if c.calls > 0 {
		c.totalDelivered += int64(c.calls)
		atomicbuf.StoreRelease64(&c.mb.w.delivered, c.totalDelivered)
	}
}

// read is one controlled read of the ring: the record core's, after its
// inlined check for a committed record at head (an empty poll makes no
// further call).
func (c *consumer) read(h recordHandler, limit int) (int, error) {
	if !c.rd.Ready() {
		return 0, nil
	}
	return c.rd.ControlledRead(h, limit)
}

// idlePoll is the part of a drain that a poll finding nothing needs, small
// enough to inline into actor.DoWork, so that an idle duty cycle makes no
// call beyond DoWork itself (docs/ringbuf.md, "Spinning consumers"). It
// reports true when the ring has no committed record at head and this
// idle drain is not one on which the liveness check runs, after counting
// it as a drain would; otherwise the caller must call drainInto.
func (m *Mailbox) idlePoll() bool {
	c := &m.cons
	if c.rd.Ready() || (c.idleDrains+1)&c.claimMask == 0 {
		return false
	}
	c.idleDrains++
	return true
}

// detached reports whether the Host took the mailbox's memory away.
func (m *Mailbox) detached() bool { return m.gone }

// ended reports whether the mailbox is closed and empty: no message is
// queued and none can arrive (see closedAfterClaim). The state is loaded
// before the tail, both sequentially consistent, as that protocol needs.
// The consumer's goroutine only.
func (m *Mailbox) ended() bool {
	if st := m.w.state.Load(); st != stateDrain && st != stateDiscard {
		return false
	}
	return m.trailer.Tail.Load() == m.trailer.Head.Load()
}

// claimAt reports whether the record at head is an open claim (negative
// length). The consumer zeroes what it consumes, so a zero is either
// nothing or a claim never marked.
func (m *Mailbox) claimAt(head int64) bool {
	// Masked to a record boundary as well: head is a word in shared
	// memory, and a read that found it misaligned reported that already.
	return m.cons.rd.LengthAt(int(head&m.cons.rd.Mask()&^(record.Alignment-1))).Load() < 0
}

// checkStall is the liveness check, run by a Drain that made no progress:
// if a claim has kept the head still for the unblock timeout while the
// tail is ahead, release it (the ring's Unblock) and count it as torn.
// marked says the head holds an open claim (a negative length), so the
// tail is ahead without reading it. The clock is read only here, so a busy
// or empty mailbox never reads it.
func (m *Mailbox) checkStall(head int64, marked bool) error {
	c := &m.cons
	if !marked && m.trailer.Tail.Load() == head {
		c.stallSince = 0
		return nil
	}
	now := m.clock.Nanos()
	if c.stallSince == 0 || c.stallHead != head {
		c.stallHead, c.stallSince = head, max(now, 1)
		return nil
	}
	if now-c.stallSince < m.timeout {
		return nil
	}
	c.stallSince = max(now, 1) // at most one attempt per timeout
	ok, err := m.prod.Unblock()
	if err != nil {
		if m.recoverDamage() {
			return nil
		}
		return errCorruptRing(err)
	}
	if ok {
		m.w.torn.Add(1)
	}
	return nil
}

// recoverDamage is the drain's way past a record at the head that the ring
// rejects (a length or claim marker no sender writes): the late stores of
// a sender stalled past UnblockTimeout, into space its released claim
// gave to other senders since. The first drain that meets the damage
// times it and notes the tail; once it has stayed for UnblockTimeout, no
// claim before that tail is in flight any more (the rule the liveness
// check relies on), and the consumer skips to the first record from which
// the records chain to that tail (record.Reader.Resync), counts the
// skipped stretch in Stats.Corrupt and reports it (ErrCorruptFrame, with
// the bytes skipped), and reads on. It reports whether it skipped
// anything. The clock is read only while damage is timed.
func (m *Mailbox) recoverDamage() bool {
	c := &m.cons
	head := m.trailer.Head.Load()
	now := m.clock.Nanos()
	if c.damageSince == 0 || c.damageHead != head {
		c.damageHead, c.damageSince, c.damageTail = head, max(now, 1), m.trailer.Tail.Load()
		return false
	}
	if now-c.damageSince < m.timeout {
		return false
	}
	c.damageSince = 0
	skipped := c.rd.Resync(c.damageTail)
	if skipped == 0 {
		return false
	}
	c.pending.active = false
	c.corrupt++
	c.reason = fmt.Sprintf("damaged records skipped: %d bytes at position %d", skipped, head)
	return true
}

// record is the ring's handler: it classifies each record and delivers
// whole messages to the user's handler.
func (c *consumer) record(recordType int32, payload []byte) Action {
	whole := payload // the record's payload as the ring holds it, checksum prefix included
	if recordType&checkedFlag != 0 || c.mb.checksum {
		var reason string
		if recordType, payload, reason = c.unseal(recordType, payload); reason != "" {
			if c.pending.active {
				c.abandon()
			}
			return c.drop(reason)
		}
	}
	class, typeID := mailboxframe.Classify(recordType)
	if class == mailboxframe.Plain {
		if c.pending.active {
			c.abandon()
		}
		c.msg.setPlain(typeID, payload)
		return c.deliver()
	}
	if class == mailboxframe.Invalid {
		if c.pending.active {
			c.abandon()
		}
		return c.drop("unknown type id")
	}
	if len(payload) < frameHeaderLength {
		if c.pending.active {
			c.abandon()
		}
		return c.drop("framed record shorter than its header")
	}
	var h mailboxframe.Header
	mailboxframe.ReadHeader(payload, &h)
	if p := &c.pending; p.active {
		if recordType == p.recordType && h.Index == p.next && h.SameMessage(&p.hdr) {
			// A later record of a message delivered at its first record.
			p.next++
			c.extra++
			if p.next == h.Count {
				p.active = false
				return p.final
			}
			return Continue
		}
		c.abandon()
	}
	m := c.mb
	if reason := m.lay.CheckFirst(&h, m.maxParts); reason != "" {
		return c.drop(reason)
	}
	if h.Count == 1 {
		body := payload[frameHeaderLength:]
		if len(body) != int(h.BodyLen) {
			return c.drop("body length does not match the record")
		}
		if !c.msg.setFramed(typeID, body, &h, &c.parts) {
			return c.drop("part lengths do not add up")
		}
		return c.deliver()
	}
	// The message's later records, read ahead: the type id as the ring
	// holds them, and the position of the lap the read is in.
	body, reason := mailboxframe.Assemble(&c.reasm, &c.rd.Log, &m.lay, whole, payload, recordType|m.checkFlag(), &h, c.positionOf(0))
	if reason != "" {
		return c.drop(reason)
	}
	if !c.msg.setFramed(typeID, body, &h, &c.parts) {
		return c.drop("part lengths do not add up")
	}
	// Set before the handler runs: if it panics, the first record is
	// consumed (the ring's rule) and the later ones must be skipped too.
	c.pending = pending{active: true, recordType: recordType, hdr: h, next: 1, final: Continue}
	a := c.deliver()
	if a == Abort {
		c.pending.active = false
		return Abort // the ring keeps the first record, hence the whole message
	}
	c.pending.final = a
	return Continue
}

// deliver hands the current message to the handler (or discards it) and
// returns the action for the ring.
func (c *consumer) deliver() Action {
	if c.discard {
		c.discarded++
		return Continue
	}
	c.calls++
	if c.recv != nil {
		return c.settle(c.receive(&c.msg))
	}
	return c.settle(c.h(&c.msg))
}

// settle turns the handler's action on a message into the ring's: Abort
// and Break end the drain, anything unknown is Continue. (The ring counts
// what is consumed; its limit ends the drain at the drain's.)
func (c *consumer) settle(a Action) Action {
	switch a {
	case Abort, Break:
		c.stop = true
		return a
	case Commit:
		return Commit
	}
	return Continue
}

// drop consumes a record with invalid framing and counts it.
func (c *consumer) drop(reason string) Action {
	c.extra++
	c.corrupt++
	c.reason = reason
	return Continue
}

// abandon forgets a delivered multi-record message whose remaining records
// no longer match what was read ahead: the ring changed under the reader,
// which no correct sender does. Counted as one corrupt record.
func (c *consumer) abandon() {
	c.pending.active = false
	c.corrupt++
	c.reason = "records of a delivered message changed before they were consumed"
}

// The error constructors stay out of Drain's body, which is on the hot
// path.

func errCorruptRing(err error) error { return fmt.Errorf("%w: %w", ErrCorrupt, err) }

func errCorruptFrames(n int64, reason string) error {
	return fmt.Errorf("%w: %d record(s) dropped: %s", ErrCorruptFrame, n, reason)
}

// beat is the consumer heartbeat, from the draining goroutine: the epoch
// time in the ring's consumer heartbeat word (when the millisecond moved,
// or always when forced), then the Host's Beat. A state word that is not
// one of the three states is reported rather than drained under.
//
// Ordering: the heartbeat is a release store (Agrona's putLongOrdered); senders load it atomically and only compare it with
// their clock, so it orders nothing else.
func (m *Mailbox) beat(force bool) error {
	c := &m.cons
	c.beats = 0
	if st := m.w.state.Load(); st > stateDiscard || st < stateOpen {
		return m.stateErr(st)
	}
	now := m.clock.EpochMillis()
	if now != c.lastBeat || force {
		atomicbuf.StoreRelease64(m.trailer.Heartbeat, now)
		c.lastBeat = now
		if m.live != nil {
			m.live.publish(m, now)
		}
	}
	if m.host != nil {
		return m.host.Beat(now, force)
	}
	return nil
}

// Heartbeat stores the consumer heartbeat now, and runs the Host's Beat.
// Drain does it every Config.HeartbeatCycles calls (an actor every as many
// duty cycles); a consumer that drains less often than its Host's timeout
// allows calls it from its duty cycle. Draining goroutine only; a view
// that only sends returns ErrNotConsumer.
func (m *Mailbox) Heartbeat() error {
	if m.sendOnly {
		return errNotConsumer(m, "Heartbeat")
	}
	return m.beat(true)
}

// unseal checks a record of a checksummed mailbox (mailboxframe.Verify) and returns
// its type id without checkedFlag and its payload after the checksum
// prefix, or the reason to drop it: a record without a checksum in a
// checksummed mailbox (or with one in a mailbox without), or one whose
// bytes are not what its sender sealed.
func (c *consumer) unseal(recordType int32, payload []byte) (int32, []byte, string) {
	switch {
	case recordType&checkedFlag == 0:
		return 0, nil, "record without its checksum"
	case !c.mb.checksum:
		return 0, nil, "checksummed record in a mailbox without checksums"
	}
	index, ok := c.rd.IndexOf(payload)
	if !ok {
		return 0, nil, "record outside the ring" // the ring's read handed it out: never
	}
	if !mailboxframe.Verify(c.positionOf(index), recordType, payload) {
		return 0, nil, "checksum mismatch"
	}
	return recordType &^ checkedFlag, payload[checksumLength:], ""
}

// positionOf returns the ring position of the record at index, which the
// current read is handing out: a read never crosses the end of the ring,
// and the head it started from (or released to since) is at or before the
// record, in the same lap.
func (c *consumer) positionOf(index int) int64 {
	return c.mb.trailer.Head.Load()&^c.rd.Mask() + int64(index)
}
