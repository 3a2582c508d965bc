package publication

import (
	"errors"
	"fmt"

	"github.com/dutyrt/duty/internal/sentinel"
)

// Outcomes of Publication.Offer and Publication.TryClaim, Aeron's distinct
// results. They are returned unwrapped, without allocating: compare with ==
// or errors.Is. Each says nothing was written.
var (
	// ErrNotConnected: the message does not fit under the publisher limit
	// and no subscriber was active at the last limit update. Transient:
	// subscribers come and go.
	ErrNotConnected = errors.New("publication: not connected")
	// ErrBackPressured: the message does not fit under the publisher limit
	// (the slowest active subscriber is a window behind) and recomputing the
	// limit did not make room. Retry later.
	ErrBackPressured = errors.New("publication: back-pressured")
	// ErrAdminAction: the message does not fit under the cached limit and
	// another goroutine of the owning process is recomputing it right now.
	// Retry at once.
	ErrAdminAction = errors.New("publication: admin action, retry")
	// ErrClosed: the publication was closed (by this Publication value,
	// or, seen from any publisher, the stream was ended by its owner); from
	// a Subscription, a use after its own Close (the end of the stream is
	// ErrEndOfStream).
	ErrClosed = sentinel.Closed("publication: closed")
	// ErrMaxPositionExceeded: the message would take the stream past its
	// max position. Close the publication and create a new one.
	ErrMaxPositionExceeded = errors.New("publication: max position exceeded")
)

// Results of Subscription.Poll and Subscription.ControlledPoll, also
// returned unwrapped.
var (
	// ErrEndOfStream: the publication was closed and this subscriber has
	// consumed everything up to its end-of-stream position.
	ErrEndOfStream = errors.New("publication: end of stream")
	// ErrPublisherDead: the publication's owner died without closing it
	// (its process is provably gone: its file lock free and no process
	// with its pid and start time, known within ownerProbeInterval of an
	// idle poll whatever its heartbeat; or its heartbeat stale and its
	// process gone), and this subscriber has consumed everything written.
	// A stopped (hung) owner is not dead. It matches ErrEndOfStream with
	// errors.Is.
	ErrPublisherDead = fmt.Errorf("publication: publisher died: %w", ErrEndOfStream)
	// ErrSubscriberDropped: this subscriber's heartbeat went stale, the
	// publisher dropped it from flow control, and the data it had not read
	// may have been overwritten. Close it and open a new subscription.
	ErrSubscriberDropped = errors.New("publication: subscriber dropped from flow control")
)

// Other publication errors, wrapped with details.
var (
	// ErrNoSubscriberSlot: every subscriber slot of the publication is taken.
	ErrNoSubscriberSlot = errors.New("publication: no free subscriber slot")
	// ErrClaimState: Commit or Abort of a claim that is not open (never
	// claimed, already completed, or unblocked by a subscriber).
	ErrClaimState = errors.New("publication: claim is not open")
	// ErrClosePending: Publication.Close sealed the publication, but calls
	// on it (an open Claim, typically) were still in flight after its
	// bounded wait, so it left the file and its mapping open. Complete the
	// claims (Commit or Abort) and call Close again.
	ErrClosePending = errors.New("publication: close pending on calls in flight")
	// ErrCorrupt: log or metadata words that no correct publisher or
	// subscriber writes (positions, records, the tail). The file is shared
	// with other processes, so this is an error and never a panic. It also
	// matches duty.ErrCorrupt, the marker of every duty package's
	// corruption errors. A configuration in the metadata that no creator
	// writes, found when opening, is the file layer's ipc.ErrCorrupt.
	ErrCorrupt = sentinel.Corrupt("publication: corrupt log")
)
