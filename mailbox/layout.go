package mailbox

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/dutyrt/duty/internal/mailboxdef"
	"github.com/dutyrt/duty/internal/pad"
)

// The mailbox's shared words: its open/closed state and its statistics,
// the words every process using a mailbox must see. A heap mailbox keeps
// them in its own memory; a mailbox placed by a Host (package ipc) keeps
// them where the Host says (Placement.Words), so that a Close and the
// statistics are the same in every process. This file is the only place
// the layout is written; layout_test.go asserts it and docs/layouts.md has
// the table.
//
// WordsLength bytes, in three 128-byte slots grouped by who writes them:
//
//	  0  int64 state: 0 open, 1 closed (drain), 2 closed (discard), 4
//	             consumer dead (a Host proved its process gone); only
//	             ever raised, by a compare-and-swap (Close, the Host).
//	             Every send loads it.
//	  8  uint32 doorbell: 1 while the consumer sleeps on it (a futex,
//	             WakeIdle), else 0; every send loads it after it
//	             published, and wakes the consumer when it is 1. Written
//	             only as the consumer falls asleep and wakes, so the
//	             senders' line stays shared while messages flow.
//	 12  ..128 reserved (0)
//	128  int64 delivered messages        (consumer)
//	136  int64 max depth, bytes          (consumer)
//	144  int64 torn messages             (consumer)
//	152  int64 corrupt records           (consumer)
//	160  int64 discarded messages        (consumer)
//	168  ..256 reserved (0)
//	256  int64 back-pressured sends      (senders, atomic add)
//	264  int64 sends refused as closed   (senders, atomic add)
//	272  ..384 reserved (0)
const (
	// WordsLength is the length of a mailbox's shared words
	// (Placement.Words).
	WordsLength = 384

	stateOffset         = 0
	doorbellOffset      = 8
	deliveredOffset     = 128
	maxDepthOffset      = 136
	tornOffset          = 144
	corruptOffset       = 152
	discardedOffset     = 160
	backPressuredOffset = 256
	refusedClosedOffset = 264
)

// Values of the state word. They only ever increase. stateDetached is
// never stored in shared memory: it marks the mailbox's own copy of its
// words after its Host took its memory away (see detach), and in shared
// memory it is as corrupt as any other value above stateDiscard.
//
// stateConsumerDead is stored in shared memory by a Host (package ipc,
// through internal/mailboxdef) that proved the consumer's process gone:
// sends everywhere are refused with ErrConsumerDead, as after a close.
const (
	stateOpen         int64 = 0
	stateDrain              = mailboxdef.StateDrain
	stateDiscard            = mailboxdef.StateDiscard
	stateDetached     int64 = 3
	stateConsumerDead       = mailboxdef.StateConsumerDead
)

// The state word's offset and open value are mailboxdef's, which a Host
// writes through.
var (
	_ [stateOffset - mailboxdef.StateOffset]struct{}
	_ [mailboxdef.StateOffset - stateOffset]struct{}
	_ [stateOpen - mailboxdef.StateOpen]struct{}
	_ [mailboxdef.StateOpen - stateOpen]struct{}
	_ [stateConsumerDead - stateDetached - 1]struct{} // above every state the mailbox stores itself
)

// words is the shared words' layout as a Go struct, so that the code
// reads w.delivered rather than an offset. Its offsets are the constants
// above (TestWordsLayout).
type words struct {
	state    atomic.Int64
	doorbell atomic.Uint32
	_        [116]byte

	delivered atomic.Int64
	maxDepth  atomic.Int64
	torn      atomic.Int64
	corrupt   atomic.Int64
	discarded atomic.Int64
	_         [88]byte

	backPressured atomic.Int64
	refusedClosed atomic.Int64
	_             [112]byte
}

var _ [WordsLength - unsafe.Sizeof(words{})]struct{} // exactly WordsLength bytes

// ownWords is the storage of a heap mailbox's words, padded in front as
// each slot is behind: the state is loaded by every send, and a neighbour
// written often would make that load a cache miss.
type ownWords struct {
	_ pad.Pair
	w words
}

// wordsAt overlays the shared words on b, which a Host placed: at least
// WordsLength bytes, 8-byte aligned.
func wordsAt(b []byte) (*words, error) {
	if len(b) < WordsLength {
		return nil, fmt.Errorf("%w: %d bytes of shared words, need %d", ErrArgument, len(b), WordsLength)
	}
	p := unsafe.Pointer(unsafe.SliceData(b))
	if uintptr(p)%8 != 0 {
		return nil, fmt.Errorf("%w: shared words at %p are not 8-byte aligned", ErrArgument, p)
	}
	return (*words)(p), nil
}
