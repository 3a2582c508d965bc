// Package record is the many-to-one ring's producer fast path, shared by
// package ringbuf (ManyToOne.Write, TryClaim, TryClaimBatch) and package
// mailbox (Mailbox.Send), so that a layer above the ring can publish a small
// record with no call frame of its own between its caller and the stores.
// It is not an API: the ring's protocol and its proofs live in ringbuf
// (docs/ringbuf.md, "Fast paths").
//
// Go saves every live register to the stack around a call, and on a
// producer whose stores to ring lines wait for the consumer's core, each of
// those stack stores queues behind them. Producer.Claim and
// Producer.Publish are small enough to inline, so a caller's fast path is
// one compare-and-swap and one call (PublishRecord) that writes the whole
// record.
package record
