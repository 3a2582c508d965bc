// Package publication is an Aeron-style IPC publication on duty's
// shared-memory file layer (package ipc): one log in a file, written by
// publishers, read by any number of subscribers in any processes on the
// host, each at its own position. The owner keeps the publisher limit at
// the slowest live subscriber's position plus a window, drops subscribers
// whose heartbeat went stale, and cleans consumed space. There is no driver
// process: the owner does this work in its own calls, and subscribers
// unblock a dead publisher's claim themselves. docs/publication.md has the
// layout, the flow control and the failure table; layout.go is the single
// source of every offset.
//
//	pub, err := publication.Create(dir, "quotes", 1<<20)   // the owner: an ipc file of kind ipc.KindPublication
//	pos, err := pub.Offer(typeID, payload)                  // the position after the message, or an outcome
//	pub.Heartbeat(time.Now().UnixMilli())                   // owner, from its duty cycle
//	sub, err := publication.OpenSubscription(ctx, path)     // any process: claims a slot, joins
//	n, err := sub.Poll(handler, limit)                      // delivers in position order
//	extra, err := publication.Open(ctx, path)               // an additional publisher (optional)
//
// # Roles and concurrency
//
// Create returns the owner. It publishes, and it alone updates the limit:
// when an offer reaches it and in Heartbeat, which the owner calls more
// often than the file's liveness timeout (ipc.WithLivenessTimeout through
// WithFileOptions; default 10 s). Open returns an additional publisher, in
// any process, that claims space in the same log but never updates the
// limit. OpenSubscription joins as a subscriber.
//
//   - A Publication's Offer, TryClaim, Heartbeat, Stats and Close, and its
//     Claims' Commit and Abort, are safe for concurrent use by any number of
//     goroutines. Close never releases the mapping under one of them: each
//     registers as in flight, and Close waits for them (bounded; see
//     Publication.Close and ErrClosePending). MaxMessageLength and File
//     read no mapping.
//   - A Subscription belongs to one goroutine: Poll, ControlledPoll,
//     Heartbeat and Close are not for concurrent use. A handler may call
//     its own Subscription's Close. Its accessors (Position,
//     DroppedMessages, PublicationStats) are safe from other goroutines,
//     except while Close releases the mapping.
//   - Nothing here starts a goroutine. Waits (for a file, for metadata, for
//     a limit update a joiner must see) are polling loops on the caller's
//     goroutine, bounded by its context.
//
// # Ordering and delivery
//
// An Offer that returned position p wrote its whole message below p and
// published it with one release store (the record's length; for a
// fragmented message, the first fragment's, which publishes every
// fragment). A subscriber's poll loads that length with an atomic load and
// delivers the message only after it: everything the publishing goroutine
// wrote before the store (the payload, and what it wrote before calling
// Offer) is visible to the handler that receives the message. The same
// holds for a Claim's Commit. The ordering is that of the store and the
// load on the shared mapping, in one process or across several: a release
// store and an atomic load (x86-TSO on amd64; sync/atomic under -race and
// on other architectures; docs/memory-ordering.md).
//
// Every subscriber receives the messages published from its join position
// on, each once and whole (a fragmented message is reassembled and
// delivered once, or not at all), in position order: one goroutine's
// messages in the order of its offers, the messages of several goroutines
// or publishers interleaved whole, in the order of their claims. Two exceptions, each
// reported: a subscriber dropped for a stale heartbeat gets
// ErrSubscriberDropped (what it had not read may be overwritten), and a
// claim unblocked after its publisher died (or stalled past the unblock
// timeout, with publishers opened by path) is lost, counted in
// Stats.UnblockedClaims. A returned Offer says the message is in the log,
// not that anyone has read it.
//
// A subscriber publishes its position when a poll returns (or at a
// ControlledPoll Commit), after its handler calls; the owner cleans log
// space, and so lets publishers write it again, only below every active
// subscriber's published position. So a handler's reads of its payload
// are done before that space is written again.
//
// # Payload lifetime
//
// Offer copies the payload into the log: the caller may reuse it when Offer
// returns. A Claim's Payload aliases the log and is valid until its Commit
// or Abort. A handler's payload aliases the log (or, for a reassembled
// message, the Subscription's buffer) and is valid only until the handler
// returns: copy what must outlive it.
//
// # Outcomes
//
// Offer and TryClaim return the new position or, unwrapped and without
// allocating, ErrClosed, ErrMaxPositionExceeded, ErrAdminAction,
// ErrBackPressured or ErrNotConnected (checked in that order): nothing was
// written. ErrAdminAction, ErrBackPressured and ErrNotConnected are
// transient; retry from the duty cycle. Poll and ControlledPoll return how
// many messages they delivered and, unwrapped: ErrEndOfStream once the
// owner closed the publication and everything was consumed,
// ErrPublisherDead (matching ErrEndOfStream) once the owner is gone
// without closing it and everything written was consumed,
// ErrSubscriberDropped, ErrClosed; or ErrCorrupt, wrapped.
// Argument errors wrap ringbuf's sentinels (ringbuf.ErrTypeID,
// ringbuf.ErrTooLong, ...) or ipc.ErrArgument; the file layer's errors
// (ipc.ErrKind, ipc.ErrNotReady, ipc.ErrOwnerDead, ipc.ErrCorrupt for a
// configuration no creator writes, ...) come back wrapped from Create,
// Open and OpenSubscription.
//
// # Failure handling
//
// The log, the metadata and the subscriber table are shared with other
// processes, so nothing another process writes there makes this package
// panic, hang or read outside the mapping: words no correct peer writes
// are ErrCorrupt (it matches duty.ErrCorrupt), naming what was found.
//
//   - A subscriber that dies, or stops polling for the subscriber timeout,
//     is dropped by the owner: the limit follows the others and publishing
//     resumes; its slot is freed later for reuse.
//   - A slow subscriber back-pressures the publishers (ErrBackPressured):
//     nothing is lost.
//   - A publisher that dies mid-claim stops every subscriber at its claim
//     until one of them turns it into padding (one torn message, counted):
//     once the claim has stayed for the unblock timeout and the owner is
//     gone (its file closed, or its heartbeat stale and its process gone:
//     ipc.OwnerClosed or ipc.OwnerDead), or, if any publisher was ever opened by
//     path, after the unblock timeout alone.
//   - An owner that dies without Close ends the stream for subscribers
//     with ErrPublisherDead once they have read what was written.
//   - A file truncated under the mapping faults on the hot paths, as the
//     file layer's rings do (see package ipc, Faults).
//
// docs/publication.md states the residual risks (a publisher stalled, not
// dead, past the unblock timeout loses its message).
package publication
