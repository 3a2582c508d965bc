package publication

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/internal/fileapi"
	"github.com/dutyrt/duty/internal/record"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/ringbuf"
)

// busyBeatPolls: a poll that made progress reads the clock (and
// heartbeats) once in this many; an idle poll always does.
const busyBeatPolls = 16

// ownerCheckInterval rate-limits the process-table check of a publisher
// whose heartbeat is stale (it reads /proc).
const ownerCheckInterval = 250 // ms

// ownerProbeInterval rate-limits the probe of a publisher whose heartbeat
// is fresh (ownerExited: its file's lock, a failing flock(2) while it
// lives), made by an idle poll: a killed publisher is known within it.
const ownerProbeInterval = 10 // ms

// Subscription reads an IPC publication from its own position, published
// in its own slot of the publication's subscriber table, which holds the
// publisher back (flow control) while the subscription is active.
//
// A Subscription belongs to one goroutine: Poll, ControlledPoll, Heartbeat
// and Close are not safe for concurrent use (open one Subscription per
// reading goroutine). The accessors are, except with Close: after Close,
// Position and DroppedMessages report what they were when Close released
// the mapping (and PublicationStats the zero value), but an
// accessor that runs while Close releases it may read unmapped memory.
type Subscription struct {
	pf    pubFile
	r     logReader
	slot  slot
	index int
	regID int64
	join  int64
	now   func() int64

	lastBeat       int64
	polls          uint64
	publishedDrops int64
	stallPos       int64 // position at which the subscriber is blocked, -1 if not
	stallSince     int64
	lastOwnerCheck int64
	ownerWasGone   bool
	lastOwnerProbe int64 // ownerExited's last probe (epoch ms), 0 before the first
	ownerExitedNow bool  // a probe proved the owner's process gone (kept)
	ended          error // ErrPublisherDead once seen
	closed         atomic.Bool

	// What the accessors report after Close (the mapping may be gone),
	// stored by Close before it releases the file.
	finalPos, finalDrops atomic.Int64
	finalEOS             atomic.Bool
}

// OpenSubscription opens the publication at path and joins it: it claims a
// free slot (ErrNoSubscriberSlot when all are taken) and starts at the join
// position: the slowest active subscriber's position, or the publisher's
// position when there is none (Aeron's rule: a late joiner never holds the
// publisher further back than it already is, and sees everything from
// there), or, with none, the first claim below that position that is
// still open, if any (see pubFile.firstOpenClaim). A closed publication
// can still be joined, by the same rule: behind a subscriber that has not
// yet drained, the joiner reads from that subscriber's position to the end
// before Poll returns ErrEndOfStream. Waiting for the file
// and for a limit update in progress is bounded by ctx; an update of an owner that is gone (closed, or dead) is
// not waited for: it was cut short and will never finish. A publication
// whose creator is gone before it wrote the metadata is ipc.ErrOwnerDead.
func OpenSubscription(ctx context.Context, path string, opts ...Option) (*Subscription, error) {
	c := newConfig(opts)
	if c.now == nil {
		return nil, fmt.Errorf("%w: nil clock", ipc.ErrArgument)
	}
	pf, err := openPublicationFile(ctx, path, c)
	if err != nil {
		return nil, err
	}
	s := &Subscription{pf: *pf, now: c.now, stallPos: -1}
	if err := pf.file.Guard(func() error { return s.joinAt(ctx) }); err != nil {
		return nil, errors.Join(err, pf.file.Close())
	}
	return s, nil
}

// joinAt claims a slot and makes it active at a join position that no
// concurrent limit update can clean or overwrite.
//
// The slot: a CAS of its state word from 0 (free) to this subscriber's
// registration id and slotJoining; every later change of the word is a CAS
// from the exact value with that id, so no other joiner can take the slot
// over and no earlier holder's Close can free it (see slot). The first
// store into the slot is the heartbeat. Until then the slot holds the
// previous holder's heartbeat, which the owner does not take for this
// join's: it frees a joining slot only once its own first sight of this
// joining word is twice the subscriber timeout old as well (updateLimit),
// so a slot claimed a moment ago is never freed under its joiner
// (TestJoinerSlotFreedUnderIt). The word is re-checked after that store
// and before the position store: a joiner that finds its slot reclaimed
// (it was paused for that long) gives up without writing further into a
// slot that may have a new holder.
//
// The protocol against the owner's updateLimit: the joiner stores its
// position and then (sequentially consistent) the state slotActive, and
// then loads the clean sequence. An update that begins after that load
// stores its odd sequence after it, so its scan, which follows, sees this
// slot active with its position, which then bounds the cleaning and the
// limit. An update that began before it has either finished (even
// sequence) or is running (odd): the joiner then waits until the sequence
// changes, i.e. that update has finished. Then it loads the clean
// position, which includes every such update's, and which must not exceed
// the join position (else the joiner retries from a fresh join position). The limit never
// exceeds clean position + window <= join position + capacity/2, so no
// publisher overwrites what the joiner has not read.
func (s *Subscription) joinAt(ctx context.Context) error {
	pf := &s.pf
	s.regID = pf.nextReg.Add(1)
	if s.regID < 1 || s.regID > maxRegistrationID {
		return fmt.Errorf("%w: %s: registration id %d", ipc.ErrCorrupt, pf.file.Path(), s.regID)
	}
	joining, active := slotWord(s.regID, slotJoining), slotWord(s.regID, slotActive)
	s.index = -1
	for i := range pf.maxSubscribers {
		w := pf.slot(i).word
		if w.Load() != 0 {
			continue
		}
		// The owner scans only the slots below "slots in use": raise it
		// before the claim, so that a joiner that dies right after its
		// CAS leaves a joining slot the owner sees and frees
		// (TestJoinerKilledRightAfterItsSlotCAS). Raised for a slot
		// another joiner then takes, it only makes the scan cover one
		// more slot.
		pf.raiseSlotsInUse(i + 1)
		if w.CompareAndSwap(0, joining) {
			s.index = i
			break
		}
	}
	if s.index < 0 {
		return fmt.Errorf("%w: %s: all %d slots taken", ErrNoSubscriberSlot, pf.file.Path(), pf.maxSubscribers)
	}
	sl := pf.slot(s.index)
	s.slot = sl
	reclaimed := func() error {
		return fmt.Errorf("%w: %s: slot %d was reclaimed while joining", ErrNoSubscriberSlot, pf.file.Path(), s.index)
	}
	s.lastBeat = s.now()
	sl.heartbeat.Store(s.lastBeat)
	if sl.word.Load() != joining {
		return reclaimed()
	}
	pid, start := ipcfile.SelfProcess()
	sl.pid.Store(int64(pid))
	sl.start.Store(int64(start))
	sl.drops.Store(0)
	for spins := 0; ; spins++ {
		if spins > 0 {
			if err := s.joinPause(ctx, sl, joining, spins, ""); err != nil {
				return err
			}
		}
		j, err := s.joinPosition()
		if err != nil {
			sl.word.CompareAndSwap(joining, 0)
			return err
		}
		if sl.word.Load() != joining {
			return reclaimed()
		}
		sl.position.Store(j)
		sl.join.Store(j)
		if !sl.word.CompareAndSwap(joining, active) {
			return reclaimed()
		}
		// Every update whose odd store follows this load scans after it,
		// so after the activation: it sees the slot and cleans no further
		// than j. Only an update running now (odd) may have scanned
		// without it: wait until that one has finished (the sequence
		// moved), then its clean position is visible to the load below.
		// The joiner waits for the sequence to change, not for a moment
		// with no update running: an owner that updates back to back (it
		// spins on Offer at a full limit) always lets it through
		// (TestJoinWhileOwnerAlwaysUpdating). An odd sequence is not
		// waited for once the owner is gone (closed, or dead: stale
		// heartbeat, process gone): no update runs or will run, and one it
		// was killed in leaves the sequence odd for good
		// (TestJoinAfterOwnerDiedMidUpdate); the clean position it may not
		// have stored is harmless: it zeroed only below every position its
		// scan saw active, and the join position is the slowest active one
		// or the tail.
		seq := pf.cleanSeq.Load()
		for waits := 0; seq&1 != 0 && pf.cleanSeq.Load() == seq && !s.ownerGone(s.lastBeat); waits++ {
			if err := s.joinPause(ctx, sl, active, waits, " (a limit update did not finish)"); err != nil {
				return err
			}
		}
		clean := pf.cleanPos.Load()
		if clean <= j {
			s.join = j
			s.r = newLogReader(pf.log.Bytes(), pf.mtu, pf.maxMessage, sl.position, j, pf.tail, pf.unblocked)
			return nil
		}
		// The clean position never passes the tail (it is the slowest
		// subscriber's position, at most the tail, which only grows): one
		// beyond the tail loaded after it would make this loop retry for
		// good (TestJoinWithCleanPositionBeyondTheTail).
		if tail := pf.tail.Load() &^ sealedBit; clean > tail {
			sl.word.CompareAndSwap(active, 0)
			return fmt.Errorf("%w: %s: clean position %d beyond the tail %d", ErrCorrupt, pf.file.Path(), clean, tail)
		}
		if !sl.word.CompareAndSwap(active, joining) {
			return fmt.Errorf("%w: %s: slot %d was dropped while joining", ErrSubscriberDropped, pf.file.Path(), s.index)
		}
	}
}

// joinPause is one step of a joiner's wait in joinAt: when ctx has ended it
// gives up the slot (from state, the slot word it holds) and returns
// ErrNotReady; otherwise it sleeps 50 µs after the first hundred steps and
// refreshes the slot's heartbeat, so that the owner does not drop a joiner
// that waits.
func (s *Subscription) joinPause(ctx context.Context, sl slot, state int64, step int, what string) error {
	if err := ctx.Err(); err != nil {
		sl.word.CompareAndSwap(state, 0)
		return fmt.Errorf("%w: %s: joining the publication%s: %w", ipc.ErrNotReady, s.pf.file.Path(), what, err)
	}
	if step > 100 {
		time.Sleep(50 * time.Microsecond)
	}
	s.lastBeat = s.now()
	sl.heartbeat.Store(s.lastBeat)
	return nil
}

// joinPosition is the slowest active subscriber's position or, with none,
// the tail, unless a claim below the tail is still open: then the first
// such claim's position (see firstOpenClaim).
func (s *Subscription) joinPosition() (int64, error) {
	pf := &s.pf
	tail := pf.tail.Load() &^ sealedBit
	j, found := tail, false
	for i := range pf.slotCount() {
		if i == s.index {
			continue
		}
		sl := pf.slot(i)
		if sl.state() != slotActive {
			continue
		}
		if p := sl.position.Load(); !found || p < j {
			j, found = p, true
		}
	}
	if !found {
		// The clean position is loaded after the tail: the tail was at
		// most a window ahead of it then (the limit never exceeds the
		// clean position plus the window).
		j = pf.firstOpenClaim(pf.cleanPos.Load(), tail)
	}
	if j < 0 || j > tail || j&(record.Alignment-1) != 0 {
		return 0, fmt.Errorf("%w: %s: join position %d, tail %d", ErrCorrupt, pf.file.Path(), j, tail)
	}
	return j, nil
}

// Poll delivers up to limit messages (a fragmented message counts once)
// to h, in order, and returns how many. payload aliases the log (or, for a
// reassembled message, the subscription's buffer): it is valid only until
// h returns. A handler that panics consumes its message.
//
// Poll stores a heartbeat in the slot when the millisecond clock has
// moved, reading it on every empty poll and every 16th that reads
// something: a subscriber whose 16 polls can outlast the subscriber
// timeout calls Heartbeat itself. A claim left uncommitted for the unblock
// timeout while the owner is gone (or once the publication has had
// external publishers) becomes padding: its message is lost, the stream
// goes on (one subscriber does it, counted in Stats.UnblockedClaims). Poll
// returns, unwrapped unless noted:
//   - ErrEndOfStream once the owner closed the publication and everything
//     up to its end was consumed;
//   - ErrPublisherDead once the owner is gone without closing and
//     everything written was consumed;
//   - ErrSubscriberDropped when the publisher dropped this subscriber
//     (data read in that call may have been overwritten; whatever the
//     call read in reused space is reported so, never as ErrCorrupt):
//     it may join again with OpenSubscription;
//   - ErrClosed after Close;
//   - ErrCorrupt, wrapped, for log contents no correct publisher writes
//     (it never waits at a header no claim leaves).
func (s *Subscription) Poll(h ringbuf.Handler, limit int) (int, error) {
	if h == nil {
		return 0, ringbuf.ErrNilHandler
	}
	return s.poll(h, nil, limit)
}

// ControlledPoll is Poll with a handler that decides, message by message:
// ringbuf.Continue (consume; the position is published when the poll
// returns), Commit (consume and publish the position now, freeing window
// for the publisher mid-poll), Break (consume and stop) or Abort (stop
// without consuming: the message, all its fragments, is delivered again by
// the next poll).
func (s *Subscription) ControlledPoll(h ringbuf.ControlledHandler, limit int) (int, error) {
	if h == nil {
		return 0, ringbuf.ErrNilHandler
	}
	return s.poll(nil, h, limit)
}

func (s *Subscription) poll(h ringbuf.Handler, ch ringbuf.ControlledHandler, limit int) (int, error) {
	if s.closed.Load() {
		return 0, ErrClosed
	}
	if !s.active() {
		return 0, ErrSubscriberDropped
	}
	before := s.r.pos
	n, err := s.r.read(h, ch, limit)
	if s.r.dropped != s.publishedDrops {
		s.publishedDrops = s.r.dropped
		atomicbuf.StoreRelease64(s.slot.drops, s.publishedDrops)
	}
	if s.r.stop { // a handler closed the subscription: release it now
		return n, errors.Join(err, s.release())
	}
	if err != nil {
		// What read found may be the new contents of space this
		// subscriber had not read, if it was dropped after the check
		// above (and lapped): the drop explains it (see corrupted).
		return n, s.corrupted(err)
	}
	if s.r.pos != before {
		if !s.active() {
			return n, ErrSubscriberDropped
		}
		// Reading the clock costs as much as a small poll: a busy
		// subscriber heartbeats every busyBeatPolls polls.
		if s.polls++; s.polls%busyBeatPolls == 0 {
			s.beat(s.now())
		}
		return n, nil
	}
	now := s.now()
	s.beat(now)
	return n, s.idle(now)
}

// active reports whether the slot is still this subscriber's and active:
// one load of the state word.
func (s *Subscription) active() bool {
	return s.slot.word.Load() == slotWord(s.regID, slotActive)
}

// beat stores a heartbeat when the clock has moved (a release store on
// the slot's own line).
func (s *Subscription) beat(now int64) {
	if now != s.lastBeat {
		s.lastBeat = now
		atomicbuf.StoreRelease64(s.slot.heartbeat, now)
	}
}

// idle runs when a poll made no progress: end of stream, a dead owner, or
// a claim that stays uncommitted.
func (s *Subscription) idle(now int64) error {
	return s.idleAt(now, s.pf.tail.Load())
}

// idleAt is idle with the tail word already loaded (tests pass one that
// has gone stale since).
func (s *Subscription) idleAt(now, tail int64) error {
	pf := &s.pf
	if err := s.r.stalled(tail); err != nil {
		return s.corrupted(err)
	}
	sealed := tail&sealedBit != 0
	tail &^= sealedBit
	pos := s.r.pos
	if pos >= tail {
		s.stallPos = -1
		switch {
		case sealed:
			return ErrEndOfStream
		case s.ended != nil:
			return s.ended
		case s.ownerGone(now):
			// The owner seals the tail before it marks its file closed,
			// so reload it: a clean Close between the load above and the
			// heartbeat check is an end of stream, not a death, and what
			// was published meanwhile is read first.
			t := pf.tail.Load()
			if t&^sealedBit > pos {
				return nil
			}
			if t&sealedBit != 0 {
				return ErrEndOfStream
			}
			s.ended = ErrPublisherDead
			return s.ended
		}
		return nil
	}
	if pos != s.stallPos {
		s.stallPos, s.stallSince = pos, now
		return nil
	}
	if now-s.stallSince < pf.unblockTimeout {
		return nil
	}
	if pf.external.Load() == 0 && !s.ownerGone(now) {
		return nil
	}
	ok, err := s.unblock(pos, tail, sealed)
	if err != nil {
		return s.corrupted(err)
	}
	if ok {
		pf.unblocked.Add(1)
		s.stallSince = now
	}
	return nil
}

// corrupted returns err, a corruption the subscriber found (in a poll's
// read, at its stall, or at an unblock), unless the publisher has dropped
// the subscriber meanwhile: then what it found may be new contents of
// space it had not read, and the error is ErrSubscriberDropped. Every
// such path checks the drop here, after its reads and before trusting
// them: a check before the read alone misses a drop (and a lap) that
// happens while the subscriber is held up between the two. Ordering: every store into a dropped subscriber's
// unread space follows its drop (publishers claim it only under a limit
// the owner released after the drop's CAS; the owner's zeroing reads as
// nothing written), so the state word, loaded after the load that saw
// such a store, shows the drop.
func (s *Subscription) corrupted(err error) error {
	if !s.active() {
		return ErrSubscriberDropped
	}
	return err
}

// ownerGone is pubFile.ownerGone with the process check rate-limited,
// and, while the owner's heartbeat is fresh, ownerExited: a killed owner
// is gone at once, not a liveness timeout later. A stopped (hung) one
// holds its lock and its process runs: gone neither way.
func (s *Subscription) ownerGone(now int64) bool {
	pf := &s.pf
	hb := ipcfile.LoadHeartbeat(pf.file)
	if hb != fileapi.HeartbeatClosed && !stale(now, hb, pf.livenessTimeout) {
		return s.ownerExited(now)
	}
	if s.lastOwnerCheck != 0 && now-s.lastOwnerCheck >= 0 && now-s.lastOwnerCheck < ownerCheckInterval {
		return s.ownerWasGone
	}
	s.lastOwnerCheck = now
	s.ownerWasGone = pf.ownerGone(now)
	return s.ownerWasGone
}

// ownerExited reports whether the owner's process has provably finished
// with the file (its lock free, its pid and start time gone: the file
// layer's OwnerExited), probing at most once per ownerProbeInterval and
// keeping a yes.
func (s *Subscription) ownerExited(now int64) bool {
	if s.ownerExitedNow {
		return true
	}
	if d := now - s.lastOwnerProbe; s.lastOwnerProbe != 0 && d >= 0 && d < ownerProbeInterval {
		return false
	}
	s.lastOwnerProbe = now
	s.ownerExitedNow = ipcfile.OwnerExited(s.pf.file)
	return s.ownerExitedNow
}

// unblock turns the uncommitted claim at pos into padding, like
// ringbuf.ManyToOne.Unblock (docs/agrona.md, "Unblocking a dead producer"), but with a CAS of the whole
// header so that of several subscribers only one rewrites it (and counts
// it), and so that a late Commit of the same claim fails instead of
// overwriting the padding.
//   - negative length (claimed, marker written): padding of the claimed
//     length (for a fragmented message, the whole claim);
//   - zero (the claimer died between its tail CAS and its marker): the gap
//     up to the next non-zero header, re-checked backwards, or to the end
//     of the log when the claim runs there, or up to the tail when the
//     tail is final (below).
//
// A zero gap that reaches the tail (the dead claim is the last thing in
// the log, before the end of the log or at index 0 after a wrap) is left
// alone while a publisher may still be alive, as Aeron's unblocker does:
// the claimer may be a live publisher about to write its marker. It is
// padded up to the tail only when the tail is final: sealed (the owner
// closed the publication: no claim succeeds any more), or no publisher
// was ever opened by path (external loaded after the tail: every claim
// below it is the owner's, and idle only calls unblock then once the owner
// is gone). The tail is reloaded after the backward re-check and must not
// have moved. Without this a subscriber stopped at such a claim forever
// and never returned ErrPublisherDead (TestDeadOwnerZeroClaimAtTail).
func (s *Subscription) unblock(pos, tail int64, sealed bool) (bool, error) {
	pf := &s.pf
	capacity := pf.log.Capacity()
	index := int(pos & pf.log.Mask())
	w := pf.log.WordAt(index)
	word := w.Load()
	length := int32(word)
	switch {
	case length > 0:
		return false, nil
	case length < 0:
		n := -int64(length)
		if !record.CheckClaim(index, capacity, length) {
			return false, fmt.Errorf("%w: claim of %d bytes at log index %d (capacity %d)", ErrCorrupt, n, index, capacity)
		}
		return w.CompareAndSwap(word, record.HeaderWord(int(n), record.PaddingTypeID)), nil
	}
	if word != 0 {
		// A type without a length: the marker is always stored first.
		return false, fmt.Errorf("%w: header %#x at log index %d", ErrCorrupt, word, index)
	}
	producerIndex := int(tail & pf.log.Mask())
	limit := capacity
	if producerIndex > index {
		limit = producerIndex
	}
	gapEnd := -1
	for i := index + record.Alignment; i < limit; i += record.Alignment {
		if pf.log.LengthAt(i).Load() != 0 {
			gapEnd = i
			break
		}
	}
	toTail := false
	if gapEnd < 0 {
		switch {
		case limit == capacity && tail-pos >= int64(capacity-index):
			gapEnd = capacity // the claim runs to the end of the log
		case limit != capacity && (sealed || pf.external.Load() == 0):
			gapEnd, toTail = limit, true // the final tail
		default:
			return false, nil
		}
	}
	for i := gapEnd - record.Alignment; i > index; i -= record.Alignment {
		if pf.log.LengthAt(i).Load() != 0 {
			return false, nil // a slow claimer wrote meanwhile
		}
	}
	if toTail && pf.tail.Load()&^sealedBit != tail {
		return false, nil // someone claims after all: the next header will show
	}
	return w.CompareAndSwap(0, record.HeaderWord(gapEnd-index, record.PaddingTypeID)), nil
}

// Heartbeat stores nowMillis (epoch ms) as this subscriber's heartbeat, for
// a subscriber that stops polling for a while but wants to keep its place.
// It returns ErrSubscriberDropped if it has already lost it.
func (s *Subscription) Heartbeat(nowMillis int64) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if !s.active() {
		return ErrSubscriberDropped
	}
	s.beat(nowMillis)
	return nil
}

// Position returns the subscriber's position: everything before it has
// been consumed.
func (s *Subscription) Position() int64 {
	if s.closed.Load() {
		return s.finalPos.Load()
	}
	return s.slot.position.Load()
}

// joinedAt returns the position the subscriber joined at.
func (s *Subscription) joinedAt() int64 { return s.join }

// registrationID returns the id the subscriber registered its slot with.
func (s *Subscription) registrationID() int64 { return s.regID }

// slotIndex returns the index of the subscriber's slot in the table.
func (s *Subscription) slotIndex() int { return s.index }

// DroppedMessages returns the messages this subscriber dropped as
// inconsistent (a fragment group that is not one complete message).
func (s *Subscription) DroppedMessages() int64 {
	if s.closed.Load() {
		return s.finalDrops.Load()
	}
	return s.slot.drops.Load()
}

// isEndOfStream reports whether the owner closed the publication and this
// subscriber has consumed everything up to its end.
func (s *Subscription) isEndOfStream() bool {
	if s.closed.Load() {
		return s.finalEOS.Load()
	}
	return s.endOfStream()
}

func (s *Subscription) endOfStream() bool {
	t := s.pf.tail.Load()
	return t&sealedBit != 0 && s.slot.position.Load() >= t&^sealedBit
}

// PublicationStats returns the publication's shared state and counters as
// this subscriber sees them (the zero value after Close).
func (s *Subscription) PublicationStats() Stats {
	if s.closed.Load() {
		return Stats{}
	}
	return s.pf.stats()
}

// file returns the publication's file.
func (s *Subscription) file() *ipc.File { return s.pf.file }

// Close leaves the publication: the slot is freed (if it is still this
// subscriber's), so it no longer holds the publisher back, and the file
// reference is released. Idempotent. A handler may call Close: the poll
// then delivers nothing more, publishes its position (the closing
// handler's message consumed) and releases the subscription when it
// returns, with the release's error if any; Close itself returns nil. If
// that handler then panics, the mapping is never released.
func (s *Subscription) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	if s.r.reading { // a handler's: poll releases it
		s.r.stop = true
		return nil
	}
	return s.release()
}

// release is Close's work: it records what the accessors report from now
// on, frees the slot and releases the file.
func (s *Subscription) release() error {
	err := s.pf.file.Guard(func() error {
		s.finalPos.Store(s.slot.position.Load())
		s.finalDrops.Store(s.slot.drops.Load())
		s.finalEOS.Store(s.endOfStream())
		// Only this subscriber's own word is freed, by a CAS from the exact
		// value (its registration id with the state, active or dropped): a
		// slot that was dropped, freed and taken by a new subscriber since
		// holds another id, and stays the new one's (see slot). No other
		// word is written: the slot may not be this subscriber's any more.
		if !s.slot.word.CompareAndSwap(slotWord(s.regID, slotActive), 0) {
			s.slot.word.CompareAndSwap(slotWord(s.regID, slotDropped), 0)
		}
		return nil
	})
	return errors.Join(err, s.pf.file.Close())
}
