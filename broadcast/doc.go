// Package broadcast is a one-to-many, lossy broadcast over a byte slice: one
// Transmitter writes messages, any number of Receivers read all of them as
// long as they keep up, and a receiver that falls behind loses messages and
// is told so. It is Agrona's BroadcastTransmitter, BroadcastReceiver and
// CopyBroadcastReceiver, with Agrona's byte layout bit for bit (layout.go),
// so a buffer in a shared file can be written or read by a Java process.
//
// # Buffer
//
// A buffer is a ring of capacity bytes (a power of two, minCapacity to
// maxCapacity) followed by a trailerLength-byte trailer holding three int64
// counters: tail intent, tail and latest. NewBuffer allocates one; any 8-byte
// aligned slice of the right length works too (an mmap'd file, say), as long
// as it starts zeroed. Constructors never write to the buffer, so a receiver
// or transmitter created late never wipes live data.
//
// # Who may call what
//
//   - Exactly one Transmitter per buffer, across all processes; it is not safe
//     for concurrent use. Transmit never blocks and never waits for a
//     receiver: there is no back-pressure.
//   - Any number of Receivers per buffer, one per goroutine. A Receiver's
//     methods are for its own goroutine, except LappedCount, which any
//     goroutine may call (it is an atomic load).
//   - A CopyReceiver wraps one Receiver and belongs to the same goroutine.
//
// # Joining and loss
//
// A new Receiver joins at the latest message: its first ReceiveNext returns
// the most recent complete message, or waits for the first one on a fresh
// buffer. Messages transmitted before that are not delivered.
//
// If the transmitter writes a whole ring while a receiver is not reading, the
// receiver's next message has been overwritten: the receiver has been
// lapped. ReceiveNext detects this, adds one to LappedCount (one per
// detection, not per lost message) and continues at the latest message. For a
// Receiver loss is therefore visible only through LappedCount; a
// CopyReceiver returns ErrLapped instead, and the caller decides how to
// recover.
//
// # Reading, validating, payload lifetime
//
// A message can also be overwritten while it is being read (a torn read). The
// raw Receiver is zero copy: after ReceiveNext returns true, TypeID and
// Payload describe the message in place, and the caller must read what it
// needs, then call Validate, and discard what it read if Validate returns
// false. The Payload slice aliases the ring: it is valid only until the next
// ReceiveNext, and its bytes are trustworthy only up to the Validate call
// that follows the reads. The CopyReceiver copies the payload into its
// scratch buffer, validates, and only then calls the handler; the slice the
// handler gets is valid during the call.
//
// Messages are delivered in transmission order; a receiver never delivers a
// message twice and never goes back.
//
// # Memory ordering
//
// Counters and record headers are accessed only with sync/atomic on aligned
// words (internal/atomicbuf). The transmitter stores the tail intent before
// it writes a record, then the header and payload, then latest and tail,
// each with a release store that keeps later stores after it (x86-TSO on
// amd64; sync/atomic's sequential consistency elsewhere, where the payload
// is also copied with atomic words). A receiver loads tail, reads the
// header and payload, then loads the tail intent again (Validate): a read
// that saw any byte of a newer record is followed by a load that sees its
// intent. This is a seqlock: on amd64 the payload bytes are plain copies;
// under -race and on other architectures they are 8-byte atomic words, so
// that the copy receiver is race-clean (see payload_plain.go and
// payload_atomic.go). Reading the raw Receiver's Payload concurrently with
// the transmitter is, by Go's definition, a data race the race detector
// reports; Validate is what makes it correct.
//
// # Shared memory
//
// Receivers bounds-check everything they read from the buffer. A counter or
// record header that a correct transmitter cannot have written (a negative or
// misaligned position, a record length below the header size, above the
// maximum or running past the end of the ring, an unknown type) is reported
// as ErrCorrupt through Receiver.Err and CopyReceiver.Receive, never as a
// panic; every call does bounded work whatever the buffer contains.
//
// # Allocation
//
// Transmit, ReceiveNext, Validate, Payload and CopyReceiver.Receive do not
// allocate (errors other than ErrLapped do, once, on the error path).
package broadcast
