package ipc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/ringbuf"
)

// pubFile is the view of a publication file that publishers and
// subscribers share: the validated, immutable configuration copied from
// the metadata once, and pointers to the shared words. Every field is
// written once by wrapPublication and only read afterwards.
type pubFile struct {
	file *File

	log      []byte
	base     unsafe.Pointer
	capacity int
	mask     int64

	window            int64
	mtu               int
	maxPayload        int // mtu - header: longest payload of one record
	maxMessage        int
	maxSubscribers    int
	subscriberTimeout int64 // ms
	unblockTimeout    int64 // ms
	maxPosition       int64

	slots atomicbuf.Buffer

	tail, limit, cleanPos, cleanSeq, eos, nextReg, external             *atomic.Int64
	dropped, unblocked, freed, backPressured, notConnected, adminAction *atomic.Int64
	connected, slotsInUse                                               *atomic.Int32
}

// slot is a view of one subscriber slot's words.
//
// Who holds a slot is decided by one word, the state word: the holder's
// registration id and the state, packed (slotWord). Every change of it is
// a CAS from the exact value the changing party loaded, and a value never
// comes back once it is gone (registration ids are unique; the one cycle,
// joining -> active -> joining, is the joiner's own retry). So:
//   - a joiner claims only a free slot, CAS 0 -> (its id, joining), and no
//     one else can then write its id into the word: two joiners cannot
//     both believe they hold a slot;
//   - Close frees only its own slot, CAS (its id, active or dropped) -> 0:
//     a slot that was dropped, freed and taken by a new subscriber since
//     holds another id, and the CAS fails
//     (TestLateCloseFreesNewSubscribersSlot);
//   - the owner drops or frees only the exact word it scanned, and judges
//     a join abandoned by its own first sight of the joining word as well
//     as by the heartbeat, which until the joiner's first store is still
//     the previous holder's (TestJoinerSlotFreedUnderIt; see updateLimit).
//
// The other words of a slot are plain stores by the holder, and only by
// the holder. A holder that pauses for longer than the owner allows (a
// subscriber timeout for an active slot, twice that for a joining or
// dropped one) loses the slot, and a store it had already decided on
// lands late, in a slot that may have a new holder by then. The joiner
// re-checks the word after its first store (the heartbeat) and before its
// position store, so only such a pause exactly between a check and the
// store after it does that; the same liveness assumption drops a paused
// subscriber (docs/ipc.md, residual risks).
type slot struct {
	word                                         *atomic.Int64
	position, heartbeat, pid, start, join, drops *atomic.Int64
}

// slotWord packs a registration id and a state into a slot's state word.
func slotWord(registration int64, state int32) int64 {
	return registration<<SlotRegistrationShift | int64(state)
}

// slotState and slotRegistration unpack a state word.
func slotState(w int64) int32 { return int32(w & (1<<SlotRegistrationShift - 1)) }

func slotRegistration(w int64) int64 { return w >> SlotRegistrationShift }

// state and registration load the slot's state word and unpack it.
func (sl slot) state() int32        { return slotState(sl.word.Load()) }
func (sl slot) registration() int64 { return slotRegistration(sl.word.Load()) }

func (f *pubFile) slot(i int) slot {
	o := i * SlotLength
	b := f.slots
	return slot{
		word:      b.Int64At(o + SlotStateOffset),
		position:  b.Int64At(o + SlotPositionOffset),
		heartbeat: b.Int64At(o + SlotHeartbeatOffset),
		pid:       b.Int64At(o + SlotPIDOffset),
		start:     b.Int64At(o + SlotStartTimeOffset),
		join:      b.Int64At(o + SlotJoinOffset),
		drops:     b.Int64At(o + SlotDroppedOffset),
	}
}

// slotCount bounds a scan of the table by the slots ever claimed.
func (f *pubFile) slotCount() int {
	return min(max(int(f.slotsInUse.Load()), 0), f.maxSubscribers)
}

// raiseSlotsInUse makes "slots in use" at least n.
func (f *pubFile) raiseSlotsInUse(n int) {
	for {
		v := f.slotsInUse.Load()
		if int(v) >= n || f.slotsInUse.CompareAndSwap(v, int32(n)) {
			return
		}
	}
}

// lengthAt and wordAt return the header words of the record at index,
// which callers have checked is 8-aligned and below capacity-8.
func (f *pubFile) lengthAt(index int) *atomic.Int32 {
	return (*atomic.Int32)(unsafe.Add(f.base, index))
}

func (f *pubFile) wordAt(index int) *atomic.Int64 {
	return (*atomic.Int64)(unsafe.Add(f.base, index))
}

// headerWord is a record header as one little-endian 8-byte word.
func headerWord(length, typeID int32) int64 {
	return int64(uint64(uint32(length)) | uint64(uint32(typeID))<<32)
}

// recordSize is the aligned space of a record with a payload of n bytes.
func recordSize(n int) int {
	return (n + ringbuf.HeaderLength + ringbuf.RecordAlignment - 1) &^ (ringbuf.RecordAlignment - 1)
}

// claimSize is the space a message of n payload bytes takes in the log:
// one record, or full fragments of maxPayload plus a remainder.
func claimSize(n, maxPayload int) int {
	if n <= maxPayload {
		return recordSize(n)
	}
	size := n / maxPayload * recordSize(maxPayload)
	if rem := n % maxPayload; rem > 0 {
		size += recordSize(rem)
	}
	return size
}

// publicationSections returns the section lengths of a publication file.
func publicationSections(capacity, maxSubscribers int) []int {
	return []int{capacity, PubMetadataLength, maxSubscribers * SlotLength}
}

// resolve validates c for a log of the given capacity and fills defaults.
func (c *pubConfig) resolve(capacity int) error {
	if capacity < MinPublicationCapacity || capacity > MaxPublicationCapacity || capacity&(capacity-1) != 0 {
		return fmt.Errorf("%w: publication capacity %d is not a power of two in [%d, %d]", ErrArgument, capacity, MinPublicationCapacity, MaxPublicationCapacity)
	}
	if c.window == 0 {
		c.window = capacity / 2
	}
	if c.mtu == 0 {
		c.mtu = min(DefaultMTU, capacity/8)
	}
	if c.maxMessage == 0 {
		c.maxMessage = capacity / 8
	}
	switch {
	case c.mtu < 2*ringbuf.HeaderLength || c.mtu > capacity/8 || c.mtu%ringbuf.RecordAlignment != 0:
		return fmt.Errorf("%w: MTU %d is not a multiple of 8 in [16, capacity/8 = %d]", ErrArgument, c.mtu, capacity/8)
	case c.maxMessage < 0 || c.maxMessage > math.MaxInt32/2:
		return fmt.Errorf("%w: max message length %d", ErrArgument, c.maxMessage)
	case c.window%ringbuf.RecordAlignment != 0 || c.window <= 0 || c.window > capacity/2:
		return fmt.Errorf("%w: window %d is not a multiple of 8 in (0, capacity/2 = %d]", ErrArgument, c.window, capacity/2)
	case 2*claimSize(c.maxMessage, c.mtu-ringbuf.HeaderLength) > c.window:
		// A claim may need padding to the end of the log plus itself: two
		// claims' worth must fit in the window or a full-size message could
		// wait forever at a wrap.
		return fmt.Errorf("%w: a message of %d bytes claims %d bytes, more than half the window %d", ErrArgument, c.maxMessage, claimSize(c.maxMessage, c.mtu-ringbuf.HeaderLength), c.window)
	case c.maxSubscribers < 1 || c.maxSubscribers > MaxSubscribersLimit:
		return fmt.Errorf("%w: %d subscriber slots, want 1 to %d", ErrArgument, c.maxSubscribers, MaxSubscribersLimit)
	case c.subscriberTimeout < time.Millisecond || c.unblockTimeout < time.Millisecond:
		return fmt.Errorf("%w: subscriber timeout %s and unblock timeout %s must be at least 1 ms", ErrArgument, c.subscriberTimeout, c.unblockTimeout)
	case c.now == nil:
		return fmt.Errorf("%w: nil clock", ErrArgument)
	}
	return nil
}

// maxPositionFor leaves room above every position for a window and a
// claim without reaching SealedBit or overflowing.
func maxPositionFor(capacity int) int64 { return SealedBit - 4*int64(capacity) }

// writePublicationMetadata initialises the metadata of a new (zero) file:
// configuration with plain stores, then the version with an atomic store,
// which publishes them to any process that loads a non-zero version.
func writePublicationMetadata(meta atomicbuf.Buffer, capacity int, c pubConfig) {
	b := meta.Bytes()
	put32 := func(off int, v int32) { *(*int32)(unsafe.Pointer(&b[off])) = v }
	put64 := func(off int, v int64) { *(*int64)(unsafe.Pointer(&b[off])) = v }
	put32(PubMaxSubscribersOffset, int32(c.maxSubscribers))
	put64(PubCapacityOffset, int64(capacity))
	put64(PubWindowOffset, int64(c.window))
	put32(PubMTUOffset, int32(c.mtu))
	put32(PubMaxMessageOffset, int32(c.maxMessage))
	put64(PubSubscriberTimeoutOffset, c.subscriberTimeout.Milliseconds())
	put64(PubUnblockTimeoutOffset, c.unblockTimeout.Milliseconds())
	put64(PubMaxPositionOffset, maxPositionFor(capacity))
	meta.Int32At(PubVersionOffset).Store(PubLayoutVersion)
}

// openPublicationFile opens path, checks its kind, waits (bounded by ctx)
// until the creator has written the metadata, and wraps it.
func openPublicationFile(ctx context.Context, path string, c pubConfig) (*pubFile, error) {
	if c.now == nil {
		return nil, fmt.Errorf("%w: nil clock", ErrArgument)
	}
	f, err := Open(ctx, path, c.fileOpts...)
	if err != nil {
		return nil, err
	}
	pf, err := func() (*pubFile, error) {
		if f.Kind() != KindPublication {
			return nil, fmt.Errorf("%w: %s has kind %d, want %d (publication)", ErrKind, path, f.Kind(), KindPublication)
		}
		if f.SectionCount() != 3 {
			return nil, fmt.Errorf("%w: %s: publication with %d sections, want 3", ErrCorrupt, path, f.SectionCount())
		}
		meta, err := f.Section(1)
		if err != nil {
			return nil, err
		}
		if len(meta) < PubMetadataLength {
			return nil, fmt.Errorf("%w: %s: metadata section of %d bytes", ErrCorrupt, path, len(meta))
		}
		mb, _ := atomicbuf.New(meta) // sections are page-aligned
		for polls := 0; ; polls++ {
			v := mb.Int32At(PubVersionOffset).Load()
			if v == PubLayoutVersion {
				break
			}
			if v != 0 {
				return nil, &VersionError{Path: path + " (publication metadata)", Found: v, Supported: PubLayoutVersion}
			}
			// Only the creator writes the metadata: once it is gone
			// (closed the file, or dead) the version stays 0 for good.
			// (The check reads /proc while the heartbeat is stale: one
			// poll in 64.)
			if polls%64 == 0 && f.ownerGone(c.now()) {
				return nil, fmt.Errorf("%w: %s: the publication's creator is gone and never wrote its metadata", ErrOwnerDead, path)
			}
			if werr := wait(ctx, newConfig(c.fileOpts).pollInterval); werr != nil {
				return nil, fmt.Errorf("%w: %s: publication metadata not written: %w", ErrNotReady, path, werr)
			}
		}
		return wrapPublication(f)
	}()
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return pf, nil
}

// wrapPublication validates a ready publication file's configuration (a
// copy is kept: a peer rewriting it later cannot send this process out of
// the mapping) and builds the shared view.
func wrapPublication(f *File) (*pubFile, error) {
	logb, err := f.Section(0)
	if err != nil {
		return nil, err
	}
	meta, _ := f.Section(1)
	slots, _ := f.Section(2)
	mb, _ := atomicbuf.New(meta)
	sb, _ := atomicbuf.New(slots)
	lb, _ := atomicbuf.New(logb)
	get32 := func(off int) int32 { return mb.Int32At(off).Load() }
	get64 := func(off int) int64 { return mb.Int64At(off).Load() }
	capacity := get64(PubCapacityOffset)
	c := pubConfig{
		window:            int(get64(PubWindowOffset)),
		mtu:               int(get32(PubMTUOffset)),
		maxMessage:        int(get32(PubMaxMessageOffset)),
		maxSubscribers:    int(get32(PubMaxSubscribersOffset)),
		subscriberTimeout: time.Duration(get64(PubSubscriberTimeoutOffset)) * time.Millisecond,
		unblockTimeout:    time.Duration(get64(PubUnblockTimeoutOffset)) * time.Millisecond,
		now:               epochMillis,
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: publication metadata: %s", ErrCorrupt, f.Path(), fmt.Sprintf(format, args...))
	}
	if capacity != int64(len(logb)) || capacity > MaxPublicationCapacity {
		return nil, bad("capacity %d, log section of %d bytes", capacity, len(logb))
	}
	if c.subscriberTimeout <= 0 || c.unblockTimeout <= 0 || get64(PubSubscriberTimeoutOffset) > maxLivenessMillis || get64(PubUnblockTimeoutOffset) > maxLivenessMillis {
		return nil, bad("timeouts %d ms and %d ms", get64(PubSubscriberTimeoutOffset), get64(PubUnblockTimeoutOffset))
	}
	if c.window == 0 || c.mtu == 0 || c.maxMessage == 0 {
		return nil, bad("window %d, MTU %d, max message %d", c.window, c.mtu, c.maxMessage)
	}
	if c.maxSubscribers < 1 || c.maxSubscribers*SlotLength > len(slots) {
		return nil, bad("%d subscriber slots in a table of %d bytes", c.maxSubscribers, len(slots))
	}
	if err := c.resolve(int(capacity)); err != nil {
		return nil, bad("%v", err)
	}
	if mp := get64(PubMaxPositionOffset); mp != maxPositionFor(int(capacity)) {
		return nil, bad("max position %d", mp)
	}
	return &pubFile{
		file:              f,
		log:               logb,
		base:              unsafe.Pointer(unsafe.SliceData(lb.Bytes())),
		capacity:          int(capacity),
		mask:              capacity - 1,
		window:            int64(c.window),
		mtu:               c.mtu,
		maxPayload:        c.mtu - ringbuf.HeaderLength,
		maxMessage:        c.maxMessage,
		maxSubscribers:    c.maxSubscribers,
		subscriberTimeout: c.subscriberTimeout.Milliseconds(),
		unblockTimeout:    c.unblockTimeout.Milliseconds(),
		maxPosition:       maxPositionFor(int(capacity)),
		slots:             sb,
		tail:              mb.Int64At(PubTailOffset),
		limit:             mb.Int64At(PubLimitOffset),
		cleanPos:          mb.Int64At(PubCleanPositionOffset),
		cleanSeq:          mb.Int64At(PubCleanSequenceOffset),
		eos:               mb.Int64At(PubEndOfStreamOffset),
		nextReg:           mb.Int64At(PubNextRegistrationOffset),
		external:          mb.Int64At(PubExternalOffset),
		dropped:           mb.Int64At(PubDroppedOffset),
		unblocked:         mb.Int64At(PubUnblockedOffset),
		freed:             mb.Int64At(PubFreedOffset),
		backPressured:     mb.Int64At(PubBackPressuredOffset),
		notConnected:      mb.Int64At(PubNotConnectedOffset),
		adminAction:       mb.Int64At(PubAdminActionOffset),
		connected:         mb.Int32At(PubConnectedOffset),
		slotsInUse:        mb.Int32At(PubSlotsInUseOffset),
	}, nil
}

// PublicationStats is a snapshot of a publication's shared state and
// counters, as any process mapping the file sees it. Fields are loaded one
// by one while others move on: an indication, not a consistent cut.
type PublicationStats struct {
	Position          int64 // tail: bytes claimed since creation
	Limit             int64 // publisher limit
	CleanPosition     int64 // the log is zeroed behind this position
	Connected         bool  // an active subscriber at the last limit update
	ActiveSubscribers int   // slots in state SlotActive now
	EndOfStream       bool  // the owner closed the publication
	EndPosition       int64 // end-of-stream position, when EndOfStream

	DroppedSubscribers int64 // subscribers dropped for a stale heartbeat
	UnblockedClaims    int64 // claims of dead publishers turned into padding (torn messages)
	FreedSlots         int64 // dropped or abandoned slots reclaimed
	BackPressured      int64 // offers that returned ErrBackPressured
	NotConnected       int64 // offers that returned ErrNotConnected
	AdminActions       int64 // offers that returned ErrAdminAction
	ExternalPublishers int64 // OpenPublication calls, ever
}

func (f *pubFile) stats() PublicationStats {
	tail := f.tail.Load()
	s := PublicationStats{
		Position:           tail &^ SealedBit,
		Limit:              f.limit.Load(),
		CleanPosition:      f.cleanPos.Load(),
		Connected:          f.connected.Load() != 0,
		EndOfStream:        tail&SealedBit != 0,
		DroppedSubscribers: f.dropped.Load(),
		UnblockedClaims:    f.unblocked.Load(),
		FreedSlots:         f.freed.Load(),
		BackPressured:      f.backPressured.Load(),
		NotConnected:       f.notConnected.Load(),
		AdminActions:       f.adminAction.Load(),
		ExternalPublishers: f.external.Load(),
	}
	if s.EndOfStream {
		s.EndPosition = s.Position
	}
	s.ActiveSubscribers = f.activeSubscribers()
	return s
}

func (f *pubFile) activeSubscribers() int {
	n := 0
	for i := range f.slotCount() {
		if f.slot(i).state() == SlotActive {
			n++
		}
	}
	return n
}

// stale reports a heartbeat older than timeout ms at now (or further in the
// future than timeout: no correct clock on this host produces that).
func stale(now, heartbeat, timeout int64) bool {
	age := now - heartbeat
	return age > timeout || age < -timeout
}

// ownerGone reports whether the file's owner is provably finished with the
// publication: it closed the file, or its heartbeat is older than the
// file's liveness timeout and no process with its pid and start time runs
// (the file layer's Dead state). The process check reads /proc, so callers
// rate-limit it; the heartbeat load comes first and is cheap.
func (f *pubFile) ownerGone(now int64) bool { return f.file.ownerGone(now) }

// ownerGone is pubFile.ownerGone for a file not wrapped yet.
func (f *File) ownerGone(now int64) bool {
	hb := f.heartbeat.Load()
	if hb == HeartbeatClosed {
		return true
	}
	if !stale(now, hb, f.hdr.livenessTimeout) {
		return false
	}
	return !processRunning(int(f.hdr.ownerPID), uint64(f.hdr.ownerStartTime))
}

// firstOpenClaim walks the records from the clean position from to the
// tail to and returns the position of the first one that is not committed
// (length <= 0: a claim still open, or a claim whose marker is not written
// yet), or to. A subscriber that joins with no active subscriber starts
// there rather than at the tail: every byte below an active subscriber's
// position is cleaned at the next limit update, and a claim cleaned while
// still open has its marker zeroed under its publisher, whose Commit then
// fails and whose late payload stays behind the clean position, where the
// next lap's readers take it for records
// (TestJoinAtTailDoesNotCleanAnOpenClaim). Below an active subscriber's
// position every record was committed (it read them), so only this case
// needs the walk. A header that is not a valid record stops the walk too
// (the joiner's reader reports it, or, if the owner was cleaning
// concurrently, the join is retried); so does a distance beyond the window,
// which no correct file shows.
func (f *pubFile) firstOpenClaim(from, to int64) int64 {
	if from >= to || from < 0 || from&(ringbuf.RecordAlignment-1) != 0 || to-from > f.window {
		return to
	}
	pos := from
	for pos < to {
		index := int(pos & f.mask)
		length := f.lengthAt(index).Load()
		if length < ringbuf.HeaderLength {
			return pos
		}
		aligned := recordSize(int(length) - ringbuf.HeaderLength)
		if aligned > f.capacity-index {
			return pos
		}
		pos += int64(aligned)
	}
	return min(pos, to)
}

// plainWordAt is wordAt for a plain (non-atomic) 8-byte store into space
// no reader can reach yet.
func (f *pubFile) plainWordAt(index int) *int64 {
	return (*int64)(unsafe.Add(f.base, index))
}
