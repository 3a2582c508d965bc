// Package record is the record core: the one definition of the Agrona
// record (header word, record size, alignment, type-id scheme), of the
// validation every reader makes of a record it did not write, of a view
// of a region of records, of the read loops, and of the many-to-one
// producer protocol. Package ringbuf builds its two ring types on it,
// package mailbox produces through it directly (its fast path in line in
// Mailbox.Send), and package ipc/publication lays its log out with it.
// It is not an API: the rings' contracts, their proofs and their figures
// are documented in ringbuf and in docs/ringbuf.md.
//
// What it defines, by concern:
//
//   - layout.go, typeid.go: HeaderLength, Alignment, LengthOffset,
//     TypeOffset, PaddingTypeID; Align, Size, HeaderWord, Marker; MaxTypeID
//     and the flags above it (FlagFramed, FlagBegin, FlagEnd, the reserved
//     bits).
//   - check.go: Check, the validation of a committed record (its length
//     covers a header and ends within the log; a message type or
//     padding), and CheckClaim, of an open claim's marker. A record that
//     fails them was written by no correct producer: every caller reports
//     it as corruption, never as a panic or an out-of-range access.
//   - log.go: Log, a view of a records region (base, capacity, mask): the
//     header words of a record, its payload, and IndexOf, the record of a
//     payload slice, the one place that turns a pointer back into an
//     index.
//   - reader.go: Reader, the consumer: Agrona's read and controlledRead,
//     zeroing (many-to-one), the consumer's prefetch, demotion of released
//     lines. action.go: Action, a controlled handler's decision.
//   - producer.go, claim.go, complete.go, batch.go, unblock.go: Producer,
//     one view's producer side of a ring and its tail guess; the fast path
//     (ClaimFast, PublishFast, PublishRecord and the copies), the general
//     claim with its padding and head-cache rules, the marker, the
//     completions (Commit, Abort, PublishClaim: a multi-record claim's
//     compare-and-swap), TryClaim, TryClaimBatch and the Batch cursor,
//     Write, and Unblock, the consumer's release of a dead producer's
//     claim, which must agree with PublishClaim.
//   - errors.go: the sentinels, which ringbuf exports as its own.
//
// Contract. The caller validates what it hands over once (a ring buffer's
// length and alignment, in ringbuf's constructors); everything read from
// the records afterwards is checked before use, because the memory may be
// shared with another process. Memory ordering is written next to each
// store (docs/memory-ordering.md has the rules): a record is published by
// the release store of its positive length, a claim marker is an ordered
// store (no later store of the claim passes it, on arm64 as on x86), the
// head is released after what it frees was zeroed. Hot paths allocate
// nothing. With -tags duty_invariants every index into the records is
// checked and a bad one panics.
//
// Claim markers. A claim's marker (negated length and type) is one 8-byte
// store, as the fast paths write it: a marker without its type, the type
// stored after it, could land after Unblock padded the claim and turn the
// padding into a committed record of that type. It is an ordered store,
// not only a release (on arm64 later plain stores may pass an STLR):
// Unblock's zero-gap scan takes the first non-zero word after a zero
// header for the next record, and a payload word seen before its marker
// would make it pad into the middle of a live claim. The consumer cannot
// pass a negative length, so the payload is plain stores. One-to-one
// rings have no Unblock and would do with a release store; they share
// Mark. Unblock pads with one compare-and-swap of the header word, not
// Agrona's two stores (type, then length), between which a slow
// producer's header store could fall and leave its type under Unblock's
// length: a committed record whose payload is not written yet.
//
// Speed. Go saves every live register to the stack around a call, and on a
// producer whose stores to ring lines wait for the consumer's core each of
// those stack stores queues behind them (docs/ringbuf.md, "Fast paths").
// So the shapes here are deliberate: ClaimFast, PublishFast, Ready, Check
// and the Log accessors inline (their callers' fast paths stay in line:
// TestFastPathsInlineTheCopy, TestReaderInlines), and Check is one boolean
// expression, so that a read loop's compiler knows a valid length covers
// the header and slices the payload without a check of its own (a variant
// that also returned the aligned length lost that); PublishRecord makes no
// call before its release store and writes in an order the tests read in
// the compiled code (TestPublishRecordStoreOrder,
// TestPublishRecordOrderOnArm64, TestClaimMarkersOrderedOnArm64); the read
// loops keep as little as they can live across the handler call; a Batch
// is four words, passed in registers.
package record
