// Package ringbuf provides Agrona-compatible ring buffers over a byte slice:
// OneToOne for one producer and one consumer, ManyToOne for any number of
// producers and one consumer.
//
// The byte layout is Agrona's, bit for bit (see layout.go): a ring created
// by duty in a shared file can be used by Agrona's Java classes over the same
// file, and the other way round. The record format, the read loop and the
// many-to-one producer protocol are the record core's (internal/record),
// which the mailbox and the IPC publication share (docs/ringbuf.md, "One
// record core"). The buffer is a power-of-two capacity of
// records followed by a 768-byte trailer holding the tail, head-cache and
// head positions, a correlation counter and the consumer's heartbeat.
//
// # Concurrency contract
//
//   - OneToOne: exactly one goroutine (or process) produces (Write, TryClaim,
//     Commit, Abort, the batch methods) and exactly one consumes (Read,
//     ControlledRead, Ready). They may run at the same time.
//   - ManyToOne: any number of goroutines and processes produce at the same
//     time; exactly one consumes (Read, ControlledRead, Ready) and calls
//     Unblock and SetDemote.
//   - Size, ProducerPosition, ConsumerPosition, NextCorrelationID,
//     ConsumerHeartbeatTime, Capacity and MaxMessageLength are safe from
//     anywhere. SetConsumerHeartbeatTime belongs to the consumer.
//   - A Claim, Batch or Records belongs to the producer that claimed it, and
//     must be completed (Commit/Abort, CommitBatch/AbortBatch,
//     CommitRecords/AbortRecords) on every path: until
//     then the consumer stops at it (FIFO is never broken). A ManyToOne
//     consumer can release a claim left by a dead producer with Unblock.
//
// # Payload lifetime
//
// A Handler's payload slice aliases the ring. It is valid only while the
// handler runs: copy what must outlive the call. A Claim's Payload is valid
// until Commit or Abort.
//
// # Results and errors
//
// A full ring is a normal result: ErrFull, returned unwrapped and without
// allocation. Bad arguments (type id < 1, negative or too long length, a
// capacity that is not a power of two plus TrailerLength, a misaligned
// buffer, a Commit or Abort of an index that is not an open claim) return
// errors wrapping the package's sentinels; test them with errors.Is. The
// ring may be shared with another process, so a record or position read
// from it that no correct peer writes is reported as ErrCorrupt, never as a
// panic or an out-of-range access.
//
// # Memory ordering
//
// Every word another goroutine or process reads concurrently (record
// lengths, positions, heartbeat, correlation counter) is accessed through
// sync/atomic on an aligned address inside the buffer. A record is
// published by the store of its positive length, after its type and payload
// (plain stores). That store, the claim marker and head's release are
// release stores: on amd64 without -race a plain MOV (x86-TSO orders stores),
// elsewhere sync/atomic's sequentially consistent store; see
// internal/atomicbuf and docs/memory-ordering.md. The consumer's load of a
// positive length acquires everything written before it.
//
// # Beyond Agrona
//
// Batched publication: WriteBatch and TryClaimBatch publish several records
// with one claim and one tail update; the consumer sees separate messages.
// The first record's claim marker covers the whole batch, so Unblock turns
// an abandoned batch into a single padding record. TryClaimRecords is the
// batch for hot loops: records of one type and payload length, whose
// filling stores nothing but the payloads.
//
// Ready, an inlinable check for a committed record at head, for consumers
// that spin: poll with Ready, then Read (see OneToOne.Ready).
//
// A ManyToOne consumer moves the cache lines it releases out of its core's
// private caches to the shared one, where producers claim them sooner
// (SetDemote: on by default; off for a consumer that is the slower end).
package ringbuf
