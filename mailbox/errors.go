package mailbox

import (
	"errors"
	"fmt"

	"github.com/dutyrt/duty/internal/sentinel"
)

// Outcomes of a send. They are returned unwrapped, without allocating, so
// a caller can compare them with == on the hot path (errors.Is works too).
var (
	// ErrBackPressured reports that the mailbox is full now: nothing was
	// sent. Retry later, wait with SendContext, or drop at the caller's
	// discretion; the refusal is counted in Stats.BackPressured.
	ErrBackPressured = errors.New("mailbox: back-pressured (full)")
	// ErrClosed reports that the mailbox was closed: nothing was sent and
	// nothing will be accepted again.
	ErrClosed = sentinel.Closed("mailbox: closed")
	// ErrTooLong reports a message larger than the mailbox accepts
	// (MaxMessageSize for Send and SendParts, MaxClaimLength for Claim and
	// ClaimParts). It is never retried successfully.
	ErrTooLong = errors.New("mailbox: message too long")
)

// ErrConsumerDead reports a mailbox whose consumer, in another process,
// has stopped draining (its Host says so: for package ipc, a consumer
// process that is provably gone, or a consumer heartbeat older than the
// mailbox's consumer timeout). A full mailbox returns it, wrapping the
// Host's details, instead of ErrBackPressured, so that a sender does not
// wait for ever. Once the Host has proved the consumer's process gone,
// every send returns it at once, whether the mailbox is full or not (the
// Host's account, made once, or ErrConsumerDead itself), and what was
// queued is counted in Stats.Stranded. Nothing was sent.
var ErrConsumerDead = errors.New("mailbox: consumer is dead")

// Validation and reporting errors. Functions wrap them with details
// (fmt.Errorf with %w); test with errors.Is.
var (
	// ErrTypeID reports a message type id outside 1..MaxTypeID.
	ErrTypeID = errors.New("mailbox: type id out of range")
	// ErrArgument reports an argument or a Config the mailbox refuses; the
	// wrapping error says which: a multipart message with no part or more
	// than MaxParts parts, a negative length, a nil handler, an invalid
	// Config, capacity or option.
	ErrArgument = errors.New("mailbox: invalid argument")
	// ErrClaim reports a Commit or Abort of a claim that is not open: never
	// claimed, or already committed or aborted. It wraps the ring's error.
	ErrClaim = errors.New("mailbox: claim is not open")
	// ErrCorruptFrame reports records that no correct sender writes: an
	// unknown type id, a frame header that does not match its message, a
	// multi-record message whose records are missing or inconsistent. The
	// records are dropped whole and counted in Stats.Corrupt; the rest of
	// the traffic flows. Drain returns it (wrapped, with the reason) after
	// delivering what it could.
	ErrCorruptFrame = sentinel.Corrupt("mailbox: corrupt frame")
	// ErrCorrupt reports ring contents the ring itself rejects (a record
	// running past the end of the ring, a misaligned position; it then
	// wraps ringbuf.ErrCorrupt, the record core's), or a state word in shared memory holding a
	// value that is not one of the three states. Both it and
	// ErrCorruptFrame match duty.ErrCorrupt.
	ErrCorrupt = sentinel.Corrupt("mailbox: corrupt shared state")
	// ErrNotConsumer reports a consumer's operation (Drain,
	// Close(Discard), Heartbeat, NewActor) on a view of a mailbox that
	// only sends: its consumer is another process.
	ErrNotConsumer = errors.New("mailbox: not the consumer (this view only sends)")
	// ErrNotDrained reports that an actor's OnClose left messages in the
	// ring: in Drain mode its handler kept aborting or a claim is still
	// open, in Discard mode a claim still open stopped the discard. The
	// messages stay in the ring, uncounted until a Drain consumes them.
	ErrNotDrained = errors.New("mailbox: closed with messages left")
)

// errNilHandler is the error of a drain or an actor without a handler,
// made once: it is returned without allocating.
var errNilHandler = fmt.Errorf("%w: nil handler", ErrArgument)

func errNotConsumer(m *Mailbox, op string) error {
	return fmt.Errorf("%w: %s of %s", ErrNotConsumer, op, m.name)
}
