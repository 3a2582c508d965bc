package publication

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/internal/fileapi"
	"github.com/dutyrt/duty/internal/record"
	"github.com/dutyrt/duty/ipc"

	"github.com/dutyrt/duty/internal/mmapfile"
)

// pubFile is the view of a publication file that publishers and
// subscribers share: the validated, immutable configuration copied from
// the metadata once, and pointers to the shared words. Every field is
// written once by wrapPublication and only read afterwards.
type pubFile struct {
	file *ipc.File

	log record.Log // the log section: capacity bytes of records

	window            int64
	mtu               int
	maxPayload        int // mtu - header: longest payload of one record
	maxMessage        int
	maxSubscribers    int
	subscriberTimeout int64 // ms
	unblockTimeout    int64 // ms
	livenessTimeout   int64 // ms: the owner's, from the file's header
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
// subscriber (docs/publication.md, residual risks).
type slot struct {
	word                                         *atomic.Int64
	position, heartbeat, pid, start, join, drops *atomic.Int64
}

// slotWord packs a registration id and a state into a slot's state word.
func slotWord(registration int64, state int32) int64 {
	return registration<<slotRegistrationShift | int64(state)
}

// slotState and slotRegistration unpack a state word.
func slotState(w int64) int32 { return int32(w & (1<<slotRegistrationShift - 1)) }

func slotRegistration(w int64) int64 { return w >> slotRegistrationShift }

// state and registration load the slot's state word and unpack it.
func (sl slot) state() int32        { return slotState(sl.word.Load()) }
func (sl slot) registration() int64 { return slotRegistration(sl.word.Load()) }

func (f *pubFile) slot(i int) slot {
	o := i * slotLength
	b := f.slots
	return slot{
		word:      b.Int64At(o + slotStateOffset),
		position:  b.Int64At(o + slotPositionOffset),
		heartbeat: b.Int64At(o + slotHeartbeatOffset),
		pid:       b.Int64At(o + slotPIDOffset),
		start:     b.Int64At(o + slotStartTimeOffset),
		join:      b.Int64At(o + slotJoinOffset),
		drops:     b.Int64At(o + slotDroppedOffset),
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

// claimSize is the space a message of n payload bytes takes in the log:
// one record, or full fragments of maxPayload plus a remainder.
func claimSize(n, maxPayload int) int {
	if n <= maxPayload {
		return record.Size(n)
	}
	size := n / maxPayload * record.Size(maxPayload)
	if rem := n % maxPayload; rem > 0 {
		size += record.Size(rem)
	}
	return size
}

// publicationSections returns the section lengths of a publication file.
func publicationSections(capacity, maxSubscribers int) []int {
	return []int{capacity, metadataLength, maxSubscribers * slotLength}
}

// resolve validates c for a log of the given capacity and fills defaults.
func (c *config) resolve(capacity int) error {
	if capacity < minCapacity || capacity > maxCapacity || capacity&(capacity-1) != 0 {
		return fmt.Errorf("%w: publication capacity %d is not a power of two in [%d, %d]", ipc.ErrArgument, capacity, minCapacity, maxCapacity)
	}
	if c.window == 0 {
		c.window = capacity / 2
	}
	if c.mtu == 0 {
		c.mtu = min(defaultMTU, capacity/8)
	}
	if c.maxMessage == 0 {
		c.maxMessage = capacity / 8
	}
	switch {
	case c.mtu < 2*record.HeaderLength || c.mtu > capacity/8 || c.mtu%record.Alignment != 0:
		return fmt.Errorf("%w: MTU %d is not a multiple of 8 in [16, capacity/8 = %d]", ipc.ErrArgument, c.mtu, capacity/8)
	case c.maxMessage < 0 || c.maxMessage > math.MaxInt32/2:
		return fmt.Errorf("%w: max message length %d", ipc.ErrArgument, c.maxMessage)
	case c.window%record.Alignment != 0 || c.window <= 0 || c.window > capacity/2:
		return fmt.Errorf("%w: window %d is not a multiple of 8 in (0, capacity/2 = %d]", ipc.ErrArgument, c.window, capacity/2)
	case 2*claimSize(c.maxMessage, c.mtu-record.HeaderLength) > c.window:
		// A claim may need padding to the end of the log plus itself: two
		// claims' worth must fit in the window or a full-size message could
		// wait forever at a wrap.
		return fmt.Errorf("%w: a message of %d bytes claims %d bytes, more than half the window %d", ipc.ErrArgument, c.maxMessage, claimSize(c.maxMessage, c.mtu-record.HeaderLength), c.window)
	case c.maxSubscribers < 1 || c.maxSubscribers > maxSubscribersLimit:
		return fmt.Errorf("%w: %d subscriber slots, want 1 to %d", ipc.ErrArgument, c.maxSubscribers, maxSubscribersLimit)
	case c.subscriberTimeout < time.Millisecond || c.unblockTimeout < time.Millisecond:
		return fmt.Errorf("%w: subscriber timeout %s and unblock timeout %s must be at least 1 ms", ipc.ErrArgument, c.subscriberTimeout, c.unblockTimeout)
	case c.now == nil:
		return fmt.Errorf("%w: nil clock", ipc.ErrArgument)
	}
	return nil
}

// maxPositionFor leaves room above every position for a window and a
// claim without reaching sealedBit or overflowing.
func maxPositionFor(capacity int) int64 { return sealedBit - 4*int64(capacity) }

// writePublicationMetadata initialises the metadata of a new (zero) file:
// configuration with plain stores, then the version with an atomic store,
// which publishes them to any process that loads a non-zero version.
func writePublicationMetadata(meta atomicbuf.Buffer, capacity int, c config) {
	b := meta.Bytes()
	put32 := func(off int, v int32) { *(*int32)(unsafe.Pointer(&b[off])) = v }
	put64 := func(off int, v int64) { *(*int64)(unsafe.Pointer(&b[off])) = v }
	put32(maxSubscribersOffset, int32(c.maxSubscribers))
	put64(capacityOffset, int64(capacity))
	put64(windowOffset, int64(c.window))
	put32(mtuOffset, int32(c.mtu))
	put32(maxMessageOffset, int32(c.maxMessage))
	put64(subscriberTimeoutOffset, c.subscriberTimeout.Milliseconds())
	put64(unblockTimeoutOffset, c.unblockTimeout.Milliseconds())
	put64(maxPositionOffset, maxPositionFor(capacity))
	meta.Int32At(versionOffset).Store(layoutVersion)
}

// openPublicationFile opens path, checks its kind, waits (bounded by ctx)
// until the creator has written the metadata, and wraps it.
func openPublicationFile(ctx context.Context, path string, c config) (*pubFile, error) {
	if c.now == nil {
		return nil, fmt.Errorf("%w: nil clock", ipc.ErrArgument)
	}
	f, err := ipcfile.Open(ctx, path, c.fileOpts...)
	if err != nil {
		return nil, err
	}
	pf, err := func() (*pubFile, error) {
		if f.Kind() != ipc.KindPublication {
			return nil, fmt.Errorf("%w: %s has kind %d, want %d (publication)", ipc.ErrKind, path, f.Kind(), ipc.KindPublication)
		}
		if ipcfile.SectionCount(f) != 3 {
			return nil, fmt.Errorf("%w: %s: publication with %d sections, want 3", ipc.ErrCorrupt, path, ipcfile.SectionCount(f))
		}
		meta, err := f.Section(1)
		if err != nil {
			return nil, err
		}
		if len(meta) < metadataLength {
			return nil, fmt.Errorf("%w: %s: metadata section of %d bytes", ipc.ErrCorrupt, path, len(meta))
		}
		mb, _ := atomicbuf.New(meta) // sections are page-aligned
		for polls := 0; ; polls++ {
			v := mb.Int32At(versionOffset).Load()
			if v == layoutVersion {
				break
			}
			if v != 0 {
				return nil, fmt.Errorf("%w: %s: publication metadata layout version %d, this build reads %d", ipc.ErrVersion, path, v, layoutVersion)
			}
			// Only the creator writes the metadata: once it is gone
			// (closed the file, or dead) the version stays 0 for good.
			// (The check reads /proc while the heartbeat is stale: one
			// poll in 64.)
			if polls%64 == 0 && ipcfile.OwnerGone(f, c.now()) {
				return nil, fmt.Errorf("%w: %s: the publication's creator is gone and never wrote its metadata", ipc.ErrOwnerDead, path)
			}
			if werr := mmapfile.Wait(ctx, ipcfile.PollInterval(c.fileOpts...)); werr != nil {
				return nil, fmt.Errorf("%w: %s: publication metadata not written: %w", ipc.ErrNotReady, path, werr)
			}
		}
		return wrapPublication(f)
	}()
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return pf, nil
}

// maxTimeoutMillis is the longest timeout the metadata may hold: the most a
// time.Duration (what the options take) can express in milliseconds, as
// for the file's liveness timeout. A larger value comes from no creator.
const maxTimeoutMillis = math.MaxInt64 / int64(time.Millisecond)

// wrapPublication validates a ready publication file's configuration (a
// copy is kept: a peer rewriting it later cannot send this process out of
// the mapping) and builds the shared view.
func wrapPublication(f *ipc.File) (*pubFile, error) {
	logb, err := f.Section(0)
	if err != nil {
		return nil, err
	}
	meta, _ := f.Section(1)
	slots, _ := f.Section(2)
	mb, _ := atomicbuf.New(meta)
	sb, _ := atomicbuf.New(slots)
	get32 := func(off int) int32 { return mb.Int32At(off).Load() }
	get64 := func(off int) int64 { return mb.Int64At(off).Load() }
	capacity := get64(capacityOffset)
	c := config{
		window:            int(get64(windowOffset)),
		mtu:               int(get32(mtuOffset)),
		maxMessage:        int(get32(maxMessageOffset)),
		maxSubscribers:    int(get32(maxSubscribersOffset)),
		subscriberTimeout: time.Duration(get64(subscriberTimeoutOffset)) * time.Millisecond,
		unblockTimeout:    time.Duration(get64(unblockTimeoutOffset)) * time.Millisecond,
		now:               epochMillis,
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: publication metadata: %s", ipc.ErrCorrupt, f.Path(), fmt.Sprintf(format, args...))
	}
	if capacity != int64(len(logb)) || capacity > maxCapacity {
		return nil, bad("capacity %d, log section of %d bytes", capacity, len(logb))
	}
	if c.subscriberTimeout <= 0 || c.unblockTimeout <= 0 || get64(subscriberTimeoutOffset) > maxTimeoutMillis || get64(unblockTimeoutOffset) > maxTimeoutMillis {
		return nil, bad("timeouts %d ms and %d ms", get64(subscriberTimeoutOffset), get64(unblockTimeoutOffset))
	}
	if c.window == 0 || c.mtu == 0 || c.maxMessage == 0 {
		return nil, bad("window %d, MTU %d, max message %d", c.window, c.mtu, c.maxMessage)
	}
	if c.maxSubscribers < 1 || c.maxSubscribers*slotLength > len(slots) {
		return nil, bad("%d subscriber slots in a table of %d bytes", c.maxSubscribers, len(slots))
	}
	if err := c.resolve(int(capacity)); err != nil {
		return nil, bad("%v", err)
	}
	if mp := get64(maxPositionOffset); mp != maxPositionFor(int(capacity)) {
		return nil, bad("max position %d", mp)
	}
	return &pubFile{
		file:              f,
		log:               record.NewLog(logb),
		window:            int64(c.window),
		mtu:               c.mtu,
		maxPayload:        c.mtu - record.HeaderLength,
		maxMessage:        c.maxMessage,
		maxSubscribers:    c.maxSubscribers,
		subscriberTimeout: c.subscriberTimeout.Milliseconds(),
		unblockTimeout:    c.unblockTimeout.Milliseconds(),
		livenessTimeout:   ipcfile.LivenessTimeout(f).Milliseconds(),
		maxPosition:       maxPositionFor(int(capacity)),
		slots:             sb,
		tail:              mb.Int64At(tailOffset),
		limit:             mb.Int64At(limitOffset),
		cleanPos:          mb.Int64At(cleanPositionOffset),
		cleanSeq:          mb.Int64At(cleanSequenceOffset),
		eos:               mb.Int64At(endOfStreamOffset),
		nextReg:           mb.Int64At(nextRegistrationOffset),
		external:          mb.Int64At(externalOffset),
		dropped:           mb.Int64At(droppedOffset),
		unblocked:         mb.Int64At(unblockedOffset),
		freed:             mb.Int64At(freedOffset),
		backPressured:     mb.Int64At(backPressuredOffset),
		notConnected:      mb.Int64At(notConnectedOffset),
		adminAction:       mb.Int64At(adminActionOffset),
		connected:         mb.Int32At(connectedOffset),
		slotsInUse:        mb.Int32At(slotsInUseOffset),
	}, nil
}

// Stats is a snapshot of a publication's shared state and
// counters, as any process mapping the file sees it. Fields are loaded one
// by one while others move on: an indication, not a consistent cut.
type Stats struct {
	Position          int64 // tail: bytes claimed since creation
	Limit             int64 // publisher limit
	CleanPosition     int64 // the log is zeroed behind this position
	Connected         bool  // an active subscriber at the last limit update
	ActiveSubscribers int   // slots in state slotActive now
	EndOfStream       bool  // the owner closed the publication
	EndPosition       int64 // end-of-stream position, when EndOfStream

	DroppedSubscribers int64 // subscribers dropped for a stale heartbeat
	UnblockedClaims    int64 // claims of dead publishers turned into padding (torn messages)
	FreedSlots         int64 // dropped or abandoned slots reclaimed
	BackPressured      int64 // offers that returned ErrBackPressured
	NotConnected       int64 // offers that returned ErrNotConnected
	AdminActions       int64 // offers that returned ErrAdminAction
	ExternalPublishers int64 // Open calls, ever
}

func (f *pubFile) stats() Stats {
	tail := f.tail.Load()
	s := Stats{
		Position:           tail &^ sealedBit,
		Limit:              f.limit.Load(),
		CleanPosition:      f.cleanPos.Load(),
		Connected:          f.connected.Load() != 0,
		EndOfStream:        tail&sealedBit != 0,
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
		if f.slot(i).state() == slotActive {
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
// (the file layer's Closed or Dead state, fileapi's OwnerGone). The process check
// reads /proc, so callers rate-limit it; the heartbeat load comes first and
// is cheap.
func (f *pubFile) ownerGone(now int64) bool { return ipcfile.OwnerGone(f.file, now) }

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
	if from >= to || from < 0 || from&(record.Alignment-1) != 0 || to-from > f.window {
		return to
	}
	pos := from
	for pos < to {
		index := int(pos & f.log.Mask())
		length := f.log.LengthAt(index).Load()
		if !record.Check(index, f.log.Capacity(), length, *f.log.TypeAt(index)) {
			return pos
		}
		pos += int64(record.Align(int(length)))
	}
	return min(pos, to)
}

// ipcfile is the file layer's internals this package builds on.
var ipcfile = fileapi.Get[ipc.File, ipc.Option]()
