package publication

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/internal/pad"
	"github.com/dutyrt/duty/internal/record"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/ringbuf"
)

// Publication is the publishing side of an IPC publication: one log in a
// shared file (ipc.KindPublication), written by publishers, read by any
// number of Subscriptions in any processes, each with its own position. See
// docs/publication.md for the layout and the flow control.
//
// The Publication returned by Create is the owner: besides
// publishing, it maintains the publisher limit (the slowest active
// subscriber's position plus the window), drops subscribers whose
// heartbeat is stale, cleans consumed log space and ends the stream at
// Close. It does so when an offer reaches the limit and in Heartbeat, which
// the owner calls from its duty cycle: there is no driver process.
// Open returns an additional publisher (in another process, or
// the same) that claims space in the same log but never updates the limit.
//
// Offer, TryClaim, and the claims' Commit and Abort are safe for
// concurrent use by any number of goroutines; Close, Heartbeat and Stats
// too. Once Close has begun, Offer, TryClaim and Heartbeat return
// ErrClosed and Stats the zero value. Close never releases the
// mapping under one of these calls: each registers as in flight before its
// closed check and until it stops touching the log (a Claim until
// its Commit or Abort), and Close waits for them (see Close). Stats has
// the shared state a caller watches (position, limit, connected, active
// subscribers, the outcome counters).
type Publication struct {
	pubFile
	owner bool
	now   func() int64
	mu    sync.Mutex // serialises limit updates within the owner
	// joins is the owner's memory of the joining slots (under mu): the
	// state word last seen in each slot and when updateLimit first saw
	// it. A join is judged abandoned by this, not by the slot's
	// heartbeat alone (see updateLimit).
	joins []seenJoin

	// The calls in flight, which Close waits for (see enter), on their
	// own cache lines, away from the read-only pubFile words that every
	// publisher loads: fast is 1 while a call holds the fast slot; users
	// counts the calls in flight without it (low bits), with closedBit set
	// once Close has begun.
	_     pad.Pair
	fast  atomic.Int32
	users atomic.Int64
	_     [pad.PairSize - 16]byte

	closeMu    sync.Mutex  // serialises Close's final step
	fileClosed atomic.Bool // Close has closed the file (see closeWithin)
	// final is what the accessors report once fileClosed is set; written
	// before it (the atomic store publishes it).
	final struct {
		pos, limit int64
		connected  bool
		active     int
	}
}

const (
	closedBit = int64(1) << 62 // in Publication.users: Close has begun
	usersMask = closedBit - 1
)

// closeWait bounds how long Close waits for the calls in flight; only a
// Claim held open by its caller (or a goroutine descheduled for that
// long) outlasts it.
const closeWait = time.Second

// hold is what a call in flight holds: the fast slot or a count in users
// (holdNone: nothing, the publication is closed).
type hold uint8

const (
	holdNone hold = iota
	holdFast
	holdCount
)

// enter registers a call that is about to touch the mapping. It returns
// holdNone, having registered nothing, once Close has begun: the caller
// returns ErrClosed without touching the mapping. Otherwise the call must
// pass the result to exactly one leave, after its last access to the
// mapping. One call at a time takes the fast slot (a CAS, given back by
// leave with a release store: one publishing goroutine pays no second
// locked instruction); a call that finds it taken counts itself in users.
//
// Ordering against Close (an atomic Or of closedBit, then loads of fast and
// users until both show no call): a Dekker pair, correct because Go's
// atomics are sequentially consistent (docs/memory-ordering.md rule 4). A
// call that took the slot and then loads users sees closedBit, or Close's
// load of fast sees the slot taken until its leave; on the counted path
// the Add's own result is the check. A call's accesses to the mapping
// precede its leave's store, and Close's load that sees no call precedes
// the munmap.
func (p *Publication) enter() hold {
	if p.fast.CompareAndSwap(0, 1) {
		if p.users.Load()&closedBit == 0 {
			return holdFast
		}
		p.fast.Store(0)
		return holdNone
	}
	return p.enterCounted()
}

// enterCounted is enter's path when the fast slot is taken, and the
// entry of the owner's cold calls (Heartbeat, Stats), which leave the slot
// to the publishing goroutines.
func (p *Publication) enterCounted() hold {
	if p.users.Add(1)&closedBit == 0 {
		return holdCount
	}
	p.users.Add(-1)
	return holdNone
}

// leave ends a call registered by enter (h is not holdNone).
func (p *Publication) leave(h hold) {
	if h == holdFast {
		atomicbuf.StoreRelease32(&p.fast, 0)
		return
	}
	p.users.Add(-1)
}

// idle reports whether no call is in flight (Close has begun: no new call
// registers).
func (p *Publication) idle() bool {
	return p.fast.Load() == 0 && p.users.Load()&usersMask == 0
}

// seenJoin is a joining state word and the owner's clock when it first saw it.
type seenJoin struct{ word, since int64 }

// Create creates dir/name (an ipc file of kind ipc.KindPublication, with
// ipc's rules for names, creation and liveness) as a publication whose log
// holds capacity bytes (a power of two from 1 KiB to 1 GiB; ipc.ErrArgument
// otherwise) and returns its owner. Until a subscriber joins,
// offers return ErrNotConnected. The owner must call Heartbeat more often
// than the file's liveness timeout (WithFileOptions(ipc.WithLivenessTimeout(d)),
// default 10 s): subscribers treat a publisher whose heartbeat is stale and
// whose process is gone as dead.
func Create(dir, name string, capacity int, opts ...Option) (*Publication, error) {
	c := newConfig(opts)
	if err := c.resolve(capacity); err != nil {
		return nil, err
	}
	f, err := ipcfile.Create(dir, name, int32(ipc.KindPublication), publicationSections(capacity, c.maxSubscribers), c.fileOpts...)
	if err != nil {
		return nil, err
	}
	meta, _ := f.Section(1)
	mb, _ := atomicbuf.New(meta)
	if err := f.Guard(func() error { writePublicationMetadata(mb, capacity, c); return nil }); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	pf, err := wrapPublication(f)
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return &Publication{pubFile: *pf, owner: true, now: c.now, joins: make([]seenJoin, pf.maxSubscribers)}, nil
}

// Open opens the publication at path as an additional publisher. It claims
// space with the owner's CAS, so all publishers' messages interleave whole,
// but never updates the limit: it relies on the owner's offers and
// Heartbeat to make room (an idle owner's Heartbeat period bounds how long
// this publisher sees ErrBackPressured). Opening one marks the publication
// as having external publishers for good (see Subscription.Poll for what
// changes). It waits, bounded by ctx, for the file and its metadata
// (ipc.ErrOwnerDead if the creator is gone before writing them).
func Open(ctx context.Context, path string, opts ...Option) (*Publication, error) {
	c := newConfig(opts)
	pf, err := openPublicationFile(ctx, path, c)
	if err != nil {
		return nil, err
	}
	pf.external.Add(1)
	return &Publication{pubFile: *pf, now: c.now}, nil
}

// File returns the file the publication lives in.
func (p *Publication) File() *ipc.File { return p.file }

// isOwner reports whether p created the publication.
func (p *Publication) isOwner() bool { return p.owner }

// capacity returns the log's capacity in bytes.
func (p *Publication) capacity() int { return p.log.Capacity() }

// windowLength returns how far a publisher may run ahead of the slowest active
// subscriber, in bytes.
func (p *Publication) windowLength() int { return int(p.window) }

// maxPayloadLength returns the longest payload that fits one record (the
// limit of TryClaim); longer offers are fragmented.
func (p *Publication) maxPayloadLength() int { return p.maxPayload }

// MaxMessageLength returns the longest payload Offer accepts.
func (p *Publication) MaxMessageLength() int { return p.maxMessage }

// maxPositionValue returns the position no message may end beyond
// (ErrMaxPositionExceeded).
func (p *Publication) maxPositionValue() int64 { return p.maxPosition }

// position returns the publisher position (the tail): the position after
// the last claimed message.
//
// After Close has closed the file, position, publisherLimit, isConnected
// and activeSubscriberCount report what they were then (the mapping is
// gone).
func (p *Publication) position() int64 {
	if p.fileClosed.Load() {
		return p.final.pos
	}
	return p.tail.Load() &^ sealedBit
}

// publisherLimit returns the publisher limit: no claim ends beyond it.
func (p *Publication) publisherLimit() int64 {
	if p.fileClosed.Load() {
		return p.final.limit
	}
	return p.limit.Load()
}

// isConnected reports whether the last limit update saw an active
// subscriber.
func (p *Publication) isConnected() bool {
	if p.fileClosed.Load() {
		return p.final.connected
	}
	return p.connected.Load() != 0
}

// activeSubscriberCount counts the subscriber slots that are active now.
func (p *Publication) activeSubscriberCount() int {
	if p.fileClosed.Load() {
		return p.final.active
	}
	return p.activeSubscribers()
}

// Stats returns a snapshot of the publication's shared state and counters
// (the zero value after Close: the mapping may be gone).
func (p *Publication) Stats() Stats {
	h := p.enterCounted() // the fast slot stays free for the publishers
	if h == holdNone {
		return Stats{}
	}
	defer p.leave(h)
	return p.stats()
}

func (p *Publication) checkMessage(typeID int32, length int) error {
	if typeID < 1 || typeID > maxTypeID {
		return fmt.Errorf("%w: message type id %d, want 1 to %d", ringbuf.ErrTypeID, typeID, maxTypeID)
	}
	if length < 0 {
		return fmt.Errorf("%w: length=%d", ringbuf.ErrLength, length)
	}
	if length > p.maxMessage {
		return fmt.Errorf("%w: maxMessageLength=%d, length=%d", ringbuf.ErrTooLong, p.maxMessage, length)
	}
	return nil
}

// Offer publishes payload as one message of type typeID (1 to 2^24-1, as
// mailbox.MaxTypeID; ringbuf.ErrTypeID otherwise) and returns the new
// publisher position (the position after the message). A payload longer
// than one record holds (the MTU, 4 KiB or capacity/8 if smaller, less
// the record header) is fragmented into records claimed
// together, contiguously, and published with one store: subscribers see
// the whole message or nothing. On failure nothing was written and the
// error is, unwrapped: ErrClosed, ErrMaxPositionExceeded,
// ErrAdminAction, ErrBackPressured or ErrNotConnected (checked in this
// order; see those errors), or a wrapped argument error.
func (p *Publication) Offer(typeID int32, payload []byte) (int64, error) {
	if err := p.checkMessage(typeID, len(payload)); err != nil {
		return 0, err
	}
	h := p.enter()
	if h == holdNone {
		return 0, ErrClosed
	}
	// leave on every return, not deferred: a deferred call would cost every
	// Offer, the hot path. A fault turned into a panic inside the copy (a
	// truncated file under debug.SetPanicOnFault) therefore keeps its hold:
	// Close then stops waiting after its bound and the broken mapping stays
	// mapped, the safe side.
	if len(payload) > p.maxPayload {
		pos, err := p.offerFragmented(typeID, payload)
		p.leave(h)
		return pos, err
	}
	recordLength := len(payload) + record.HeaderLength
	index, pos, err := p.claim(record.Size(len(payload)))
	if err != nil {
		p.leave(h)
		return 0, err
	}
	p.mark(index, int32(recordLength), typeID)
	copy(p.log.Payload(index, len(payload)), payload)
	atomicbuf.StoreRelease32(p.log.LengthAt(index), int32(recordLength))
	p.leave(h) // after the last access to the mapping
	return pos, nil
}

// offerFragmented writes a message as fragments, the way ringbuf batches
// are written: the first record's claim marker covers the whole claim, the
// other headers are plain stores behind it, and the release store of the
// first record's length publishes everything at once. A publisher that
// dies before that store leaves one negative header, which an unblock
// turns into one padding record: one torn message, never a partial one.
func (p *Publication) offerFragmented(typeID int32, payload []byte) (int64, error) {
	total := claimSize(len(payload), p.maxPayload)
	index, pos, err := p.claim(total)
	if err != nil {
		return 0, err
	}
	// The marker covers the whole claim; its type is the first fragment's
	// (never the last: the payload is longer than one), in the same store
	// (see mark).
	p.mark(index, int32(total), typeID|fragmentFlag|beginFlag)
	at, first := index, int32(0)
	for off := 0; off < len(payload); off += p.maxPayload {
		chunk := payload[off:min(off+p.maxPayload, len(payload))]
		flags := fragmentFlag
		if off == 0 {
			flags |= beginFlag
		}
		if off+len(chunk) == len(payload) {
			flags |= endFlag
		}
		rl := int32(len(chunk) + record.HeaderLength)
		if off == 0 {
			first = rl // the type went with the marker
		} else {
			// Behind the first marker no subscriber reaches this header
			// before the publishing store below, which publishes it: one
			// plain 8-byte store of length and type.
			*(*int64)(unsafe.Pointer(p.log.WordAt(at))) = record.HeaderWord(int(rl), typeID|flags)
		}
		copy(p.log.Payload(at, len(chunk)), chunk)
		at += record.Size(len(chunk))
	}
	atomicbuf.StoreRelease32(p.log.LengthAt(index), first)
	return pos, nil
}

// mark writes a record's claim marker: the negated length and the type,
// one 8-byte ordered store (a release store that later stores cannot pass:
// no byte of the claim becomes visible before it, on arm64 as under
// x86-TSO, which the zero-gap unblock relies on). One store, as in Aeron: with the
// type stored after the length, an unblock could turn the claim into
// padding between the two and the late type store would turn that padding
// back into a record, delivered before its payload was written
// (TestUnblockedClaimStaysPadding).
func (p *Publication) mark(index int, recordLength, typeID int32) {
	atomicbuf.StoreOrdered64(p.log.WordAt(index), record.HeaderWord(int(-recordLength), typeID))
}

// claim reserves required (aligned) bytes at the tail and returns the
// record index and the new position. A claim that does not fit before the
// end of the log pads the end and takes the space at index 0, with the
// same CAS. The space check is against the publisher limit: every byte
// below it has been consumed by every active subscriber a lap ago and
// zeroed since (see updateLimit), so no head needs reading. The caller
// has registered with enter, which is also its closed check.
func (p *Publication) claim(required int) (int, int64, error) {
	for {
		tail := p.tail.Load()
		if tail&sealedBit != 0 {
			return 0, 0, ErrClosed
		}
		if tail < 0 || tail&(record.Alignment-1) != 0 {
			return 0, 0, fmt.Errorf("%w: tail position %d", ErrCorrupt, tail)
		}
		tailIndex := int(tail & p.log.Mask())
		padding := 0
		if toEnd := p.log.Capacity() - tailIndex; required > toEnd {
			padding = toEnd
		}
		newTail := tail + int64(padding+required)
		if newTail > p.maxPosition {
			return 0, 0, ErrMaxPositionExceeded
		}
		if newTail > p.limit.Load() {
			if err := p.overLimit(newTail); err != nil {
				return 0, 0, err
			}
			continue // the limit moved: try again
		}
		if !p.tail.CompareAndSwap(tail, newTail) {
			continue
		}
		if padding == 0 {
			return tailIndex, newTail, nil
		}
		p.mark(tailIndex, int32(padding), record.PaddingTypeID)
		atomicbuf.StoreRelease32(p.log.LengthAt(tailIndex), int32(padding))
		return 0, newTail, nil
	}
}

// overLimit handles a claim ending at newTail beyond the cached limit. The
// owner recomputes the limit (nil: retry the claim), unless another of its
// goroutines is doing so (ErrAdminAction); other publishers cannot.
func (p *Publication) overLimit(newTail int64) error {
	if p.owner {
		if !p.mu.TryLock() {
			p.adminAction.Add(1)
			return ErrAdminAction
		}
		err := p.updateLimit(p.now())
		p.mu.Unlock()
		if err != nil {
			return err
		}
		if newTail <= p.limit.Load() {
			return nil
		}
	}
	if p.connected.Load() == 0 {
		p.notConnected.Add(1)
		return ErrNotConnected
	}
	p.backPressured.Add(1)
	return ErrBackPressured
}

// updateLimit is the owner's flow control, what Aeron's driver conductor
// does for an IPC publication (docs/ipc.md, "The Aeron IPC model"). p.mu is held.
//
//  1. The clean sequence becomes odd (sequentially consistent store), and
//     only then are the slots scanned: a subscriber joining concurrently
//     either is seen by this scan or sees the sequence odd, waits until
//     this update has finished, and checks the clean position that
//     results, retrying if it passed its join position (see joinAt).
//  2. Active subscribers whose heartbeat is stale beyond the subscriber
//     timeout are dropped (CAS of the state word scanned to the same
//     registration, slotDropped; counted): their position no longer holds
//     the limit. Dropped slots whose heartbeat is stale for twice the
//     timeout are freed for reuse (CAS of the word scanned to 0), and so
//     are joining slots once their heartbeat is that stale and this
//     owner first saw the joining word more than twice the timeout ago
//     (p.joins: a fresh joiner's slot holds its predecessor's heartbeat
//     until the joiner's first store).
//  3. No active subscriber: not connected; the limit is lowered to the
//     tail, so that offers fail with ErrNotConnected instead of writing
//     what nobody will read (Aeron clamps the same way); nothing is
//     cleaned.
//  4. Otherwise m = the slowest active position: the log from the clean
//     position up to m is zeroed (every active subscriber has read it),
//     the clean position becomes m, the sequence even again, and the limit
//     m + window is published. The zeroing precedes the limit, so every
//     byte a claim below the new limit gets is zero from its previous lap
//     (window <= capacity/2 and the limit never exceeds clean position +
//     window), which is what makes "length 0 = not written yet" true for
//     subscribers and for the zero-gap unblock.
func (p *Publication) updateLimit(now int64) error {
	p.cleanSeq.Add(1) // odd: scanning and cleaning
	minPos, active := int64(0), 0
	for i := range p.slotCount() {
		s := p.slot(i)
		// Drops and frees are CASes from the exact word scanned: a slot
		// whose holder changed since (closed, re-joined) is left alone.
		switch w := s.word.Load(); slotState(w) {
		case slotActive:
			if stale(now, s.heartbeat.Load(), p.subscriberTimeout) {
				if s.word.CompareAndSwap(w, slotWord(slotRegistration(w), slotDropped)) {
					p.dropped.Add(1)
				}
				continue
			}
			pos := s.position.Load()
			if active == 0 || pos < minPos {
				minPos = pos
			}
			active++
		case slotJoining:
			// Until the joiner's first store the heartbeat is the previous
			// holder's, possibly long stale (or 0 in a slot never used): it
			// says nothing about this join. The owner's own first sight of
			// the word (unique: it holds the joiner's registration id)
			// bounds the claim's age from above, so a join is abandoned only
			// once both are older than twice the timeout: the joiner did
			// nothing for that long after its claim.
			seen := &p.joins[i]
			if seen.word != w {
				seen.word, seen.since = w, now
			}
			if now-seen.since > 2*p.subscriberTimeout && stale(now, s.heartbeat.Load(), 2*p.subscriberTimeout) &&
				s.word.CompareAndSwap(w, 0) {
				p.freed.Add(1)
			}
		case slotDropped:
			// The heartbeat is the dropped holder's own: it stored it
			// before its slot became active.
			if stale(now, s.heartbeat.Load(), 2*p.subscriberTimeout) && s.word.CompareAndSwap(w, 0) {
				p.freed.Add(1)
			}
		}
	}
	tail := p.tail.Load() &^ sealedBit
	if active == 0 {
		p.cleanSeq.Add(1)
		p.connected.Store(0)
		if tail < p.limit.Load() {
			p.limit.Store(tail)
		}
		return nil
	}
	clean := p.cleanPos.Load()
	minPos = min(minPos, tail)
	// Both words are in the shared file: bound them before subtracting, so
	// that a hostile value cannot wrap the difference past the window check
	// (a clean position of math.MinInt64 made zero slice out of range).
	if minPos < 0 || clean < 0 || (minPos|clean)&(record.Alignment-1) != 0 || minPos-clean > p.window {
		p.cleanSeq.Add(1)
		return fmt.Errorf("%w: slowest subscriber position %d, clean position %d, tail %d", ErrCorrupt, minPos, clean, tail)
	}
	if minPos > clean {
		p.zero(clean, minPos)
		p.cleanPos.Store(minPos)
	}
	p.cleanSeq.Add(1) // even
	p.connected.Store(1)
	p.limit.Store(minPos + p.window)
	return nil
}

// zero clears the log between two positions less than a lap apart.
func (p *Publication) zero(from, to int64) {
	for from < to {
		i := int(from & p.log.Mask())
		n := int(min(to-from, int64(p.log.Capacity()-i)))
		clear(p.log.Bytes()[i : i+n])
		from += int64(n)
	}
}

// Heartbeat is the owner's duty-cycle call: it stores nowMillis (epoch ms)
// as the file's heartbeat (ipc.File.Heartbeat: an fstat and a guarded release
// store) and updates the limit (dropping stale subscribers, cleaning,
// raising the limit for every publisher). Call it more often than the
// file's liveness timeout, and often enough that other publishers are not
// held back by a stale limit. If another goroutine is updating the limit
// it skips that part. Owner only (ipc.ErrNotOwner).
func (p *Publication) Heartbeat(nowMillis int64) error {
	if !p.owner {
		return fmt.Errorf("%w: %s: publication heartbeat", ipc.ErrNotOwner, p.file.Path())
	}
	h := p.enterCounted() // the fast slot stays free for the publishers
	if h == holdNone {
		return ErrClosed
	}
	defer p.leave(h) // updateLimit reads and zeroes the mapping
	if err := p.file.Heartbeat(nowMillis); err != nil {
		return err
	}
	if !p.mu.TryLock() {
		return nil
	}
	defer p.mu.Unlock()
	return p.updateLimit(nowMillis)
}

// Claim is space claimed by TryClaim for one record. Write the
// payload into Payload, then call exactly one of Commit or Abort, even on
// error paths: until then every subscriber stops at the claim, and the
// claim keeps the publication's mapping alive across a Close (Close waits
// for it for a bounded time; past that, the file is closed once the claim
// is completed: see Publication.Close). Do not use Payload after Commit or
// Abort, nor complete a copy of a claim.
type Claim struct {
	// Payload is the claimed space, aliasing the log.
	Payload []byte

	p        *Publication // nil once completed
	index    int
	length   int32 // record length
	typeID   int32
	position int64
	hold     hold // what the claim holds of p's calls in flight (TryClaim's)
}

// Position returns the publisher position after the claimed record.
func (c *Claim) Position() int64 { return c.position }

// TryClaim claims space for a message of length bytes (at most what one
// record holds, see Offer: claims are never fragmented) and type typeID, and
// returns it with the position after it. Failures are Offer's.
func (p *Publication) TryClaim(typeID int32, length int) (Claim, error) {
	if err := p.checkMessage(typeID, length); err != nil {
		return Claim{}, err
	}
	if length > p.maxPayload {
		return Claim{}, fmt.Errorf("%w: a claim of %d bytes exceeds the max payload %d", ringbuf.ErrTooLong, length, p.maxPayload)
	}
	h := p.enter()
	if h == holdNone {
		return Claim{}, ErrClosed
	}
	index, pos, err := p.claim(record.Size(length))
	if err != nil {
		p.leave(h)
		return Claim{}, err
	}
	rl := int32(length + record.HeaderLength)
	p.mark(index, rl, typeID)
	// The claim keeps its hold until Commit or Abort.
	return Claim{Payload: p.log.Payload(index, length), p: p, index: index, length: rl, typeID: typeID, position: pos, hold: h}, nil
}

// Commit publishes the claimed record. It is a CAS of the whole header from
// its claimed to its committed value, so a second Commit or Abort, or a
// Commit after a subscriber unblocked the claim (the publisher stalled
// longer than the unblock timeout), fails with ErrClaimState instead of
// corrupting the log.
func (c *Claim) Commit() error {
	return c.complete(c.typeID, "commit")
}

// Abort discards the claimed record: subscribers skip it as padding.
func (c *Claim) Abort() error {
	return c.complete(record.PaddingTypeID, "abort")
}

// complete CASes the header and, whatever the outcome, ends the claim: it
// gives back the hold TryClaim took (after its last access to the
// mapping, which Close may release from then on), and a second completion
// fails without touching the mapping.
func (c *Claim) complete(typeID int32, op string) error {
	p := c.p
	if p == nil {
		return fmt.Errorf("%w: %s of a claim that is not open (never made, or already completed)", ErrClaimState, op)
	}
	var err error
	w := p.log.WordAt(c.index)
	if !w.CompareAndSwap(record.HeaderWord(int(-c.length), c.typeID), record.HeaderWord(int(c.length), typeID)) {
		err = fmt.Errorf("%w: %s at log index %d: header is %#x", ErrClaimState, op, c.index, w.Load())
	}
	c.p = nil
	if c.hold != holdNone {
		p.leave(c.hold)
		c.hold = holdNone
	}
	return err
}

// Close ends the publication. The owner seals the tail (no claim succeeds
// afterwards, in any process) and stores the end-of-stream position:
// subscribers drain to it and then get ErrEndOfStream. Another publisher's
// Close seals nothing.
//
// Close then waits for the calls in flight on this Publication (Offer,
// TryClaim, Heartbeat, Stats, and every Claim not yet completed) before it
// closes the file, releasing the mapping (the owner's heartbeat becomes
// its heartbeat becomes closed first); calls that begin later return ErrClosed
// (Stats the zero value) without touching it. The wait is bounded (one
// second): with a claim still open then, Close returns an error wrapping
// ErrClosePending and leaves the file open, the stream sealed; complete
// the claims and call Close again. Once Close has returned nil, later
// calls return nil at once.
func (p *Publication) Close() error { return p.closeWithin(closeWait) }

// closeWithin is Close with the bound on the wait as a parameter (tests).
func (p *Publication) closeWithin(wait time.Duration) error {
	if p.fileClosed.Load() {
		return nil
	}
	p.users.Or(closedBit) // no call registers from now on
	var err error
	if p.owner {
		// The Publication's own file reference, released below, keeps the
		// mapping under the seal. Sealing an already sealed tail (a Close
		// retried after ErrClosePending) changes nothing.
		err = p.file.Guard(func() error {
			p.mu.Lock()
			defer p.mu.Unlock()
			for {
				t := p.tail.Load()
				if t&sealedBit != 0 {
					return nil
				}
				if p.tail.CompareAndSwap(t, t|sealedBit) {
					p.eos.Store(t)
					return nil
				}
			}
		})
	}
	deadline := time.Now().Add(wait)
	for spins := 0; !p.idle(); spins++ {
		if !time.Now().Before(deadline) {
			return errors.Join(err, fmt.Errorf("%w: %s: calls or claims still in flight after %s; complete them and Close again",
				ErrClosePending, p.file.Path(), wait))
		}
		// Calls other than open claims last microseconds.
		if spins < 64 {
			runtime.Gosched()
		} else {
			time.Sleep(min(time.Duration(spins-63)*10*time.Microsecond, time.Millisecond))
		}
	}
	p.closeMu.Lock()
	defer p.closeMu.Unlock()
	if p.fileClosed.Load() {
		return nil // a concurrent Close closed it
	}
	ferr := p.file.Guard(func() error {
		p.final.pos, p.final.limit = p.tail.Load()&^sealedBit, p.limit.Load()
		p.final.connected, p.final.active = p.connected.Load() != 0, p.activeSubscribers()
		return nil
	})
	p.fileClosed.Store(true) // publishes final; the accessors read it from now on
	return errors.Join(err, ferr, p.file.Close())
}
