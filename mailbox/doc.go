// Package mailbox is a bounded many-to-one mailbox for agents: any number
// of goroutines, and processes, send messages, and the one goroutine that
// owns the mailbox drains them inside its duty cycle. It is Agrona's
// many-to-one ring, built on the record core that package ringbuf's rings
// share, and keeps its byte layout: a plain message is an ordinary ring
// record that an Agrona consumer (or a ringbuf.ManyToOne over the same
// memory) can read.
//
// A mailbox's bytes live on the heap (New) or in a file that other
// processes map (ipc.CreateMailbox for its consumer, ipc.OpenMailbox for
// senders elsewhere): either way it is a *Mailbox, with the same methods
// and outcomes, so an agent written against *Mailbox runs unchanged on
// both. What differs across processes reaches the mailbox through its
// Host (Config.Host): the memory it lives in, whether its consumer is
// alive, and the consumer's heartbeat.
//
//	mb, _ := mailbox.New(mailbox.Config{Name: "orders"})   // own 64 KiB ring
//	err := mb.Send(7, payload)            // nil, ErrBackPressured, ErrClosed, ErrTooLong
//	err = mb.SendParts(8, hdr, body)      // multipart: all parts or none
//	n, err := mb.Drain(func(m *mailbox.Message) mailbox.Action {
//		use(m.TypeID(), m.Payload())      // valid during the call only
//		return mailbox.Continue
//	}, 256)
//
// # Who calls what
//
//   - Send, SendParts, SendContext, SendPartsContext, Claim, ClaimParts,
//     Close(Drain), Stats and the accessors: any goroutine, at
//     any time.
//   - A Sender: one goroutine at a time (it keeps a sequence number and an
//     idle strategy). Create one per sending goroutine with NewSender.
//   - Drain, Close(Discard), Heartbeat: exactly one
//     goroutine, the owner (typically the agent whose DoWork drains: see
//     actor). They read and release the ring; two concurrent drains
//     corrupt it. A view of a mailbox whose consumer is another process
//     (ipc.OpenMailbox) refuses them with ErrNotConsumer.
//
// # Ordering
//
// A Send (or SendParts, a claim's Commit) that returned nil
// happens before the handler call that delivers its message: whatever the
// sender wrote before it, the handler sees. The message's bytes are
// published by the release store of its record's length and acquired by
// the consumer's load of it (the ring's ordering); across processes the
// same edge holds through the shared mapping. Messages of one goroutine
// (or one Sender) are delivered in the order they were sent; messages of
// different goroutines in the order their claims were made.
//
// # Sending
//
// No send blocks except the ...Context variants. The outcome is one of:
// nil (accepted: the message will be delivered exactly once, after every
// message this goroutine sent before), ErrBackPressured (the ring has no
// room now; nothing was sent), ErrClosed, ErrTooLong (above
// MaxMessageSize, or MaxClaimLength for a claim), all unwrapped and
// without allocation, or a validation error wrapping ErrTypeID or
// ErrArgument. Back-pressure is the normal signal of a consumer that does not
// keep up: the sender decides whether to retry, wait (SendContext, which
// idles with a back-off strategy until accepted, ctx ends, or the mailbox
// closes), or drop. Refusals are counted in Stats.BackPressured. When the
// consumer is another process, a full mailbox also asks the Host whether
// it still drains (at the first refusal, then one in 16, and while a
// SendContext waits): a dead consumer is reported as an error wrapping
// ErrConsumerDead instead of back-pressure for ever. Every send path asks:
// the Mailbox's methods, a Sender's, claims, typed sends and the waiting
// variants alike.
//
// Claim and ClaimParts give ring space to write in place (zero copy); the
// caller must then Commit or Abort on every path. Package message sends
// Go types through them (message.Fixed, message.Codec). The send methods
// copy the payload before they
// return; the caller keeps ownership of its slices.
//
// # Multipart and large messages
//
// SendParts sends several parts as one message, ZeroMQ-style: the receiver
// gets all parts together, in order, and never part of them. A message
// larger than one record (MaxClaimLength) is fragmented. Either way the
// records of one message are claimed and published as one ring batch (one
// tail update, one publication store), so the records of concurrent
// senders never interleave and the receiver never sees a message in part.
// internal/mailboxframe and docs/mailbox.md describe the framing.
//
// # Draining
//
// Drain hands up to limit whole messages to a Handler, which returns an
// Action with the ring's meaning: Continue, Commit (release the space
// now), Break (stop after this message) or Abort (leave this message, all
// its records, for the next Drain: the back-pressure idiom of an agent
// whose downstream is full). A Message and every slice it gives are valid
// only during the handler call: a one-record message aliases the ring, a
// reassembled one the mailbox's reusable buffer. A handler never drains,
// discards or Close(Discard)s its own mailbox (see Handler).
//
// An agent that is a Receiver (Receive returns an Action and an error)
// drains into itself with DrainTo, without the allocation a method value
// would cost, and its errors reach the runner (NewReceiverActor). A
// Receiver that is a Dispatcher gives each type id a Receiver of its own,
// which the drain calls directly (package message's Router is one).
//
// # Torn and corrupt messages
//
// A sender that dies (or hangs) between claim and commit leaves a claim
// that blocks the ring. Drain's liveness check releases it after
// Config.UnblockTimeout without progress (the ring's Unblock) and counts it
// in Stats.Torn: the message is dropped whole, never delivered in part.
// Records whose framing is invalid (unknown type id bits, inconsistent
// frame headers, missing fragments) can only come from a faulty process
// sharing the ring: they are dropped whole, counted in Stats.Corrupt, and
// reported by Drain with an error wrapping ErrCorruptFrame, while the rest
// of the traffic flows.
//
// # Checksums
//
// A sender stalled between claim and commit for longer than
// Config.UnblockTimeout (a process stopped with SIGSTOP, a debugger) has
// its claim released as torn; when it resumes, its late stores can land in
// space another sender has claimed since, whose message would then be
// delivered with bytes nobody sent. No store can be taken back, so a
// mailbox with Config.Checksum makes it detectable: every record carries a
// CRC32C of its ring position, length, type and bytes, sealed by its
// sender and checked by the consumer first; a record that does not match
// is dropped with its message, counted in Stats.Corrupt and reported with
// ErrCorruptFrame. Checksums cost each message the checks at both ends and
// Send's in-line fast path; records stop being Agrona's plain records.
// Without them such a message is delivered as it is found.
//
// # Closing
//
// Close refuses new sends at once. Close(Drain) leaves what is queued for
// the owner to drain; Close(Discard) consumes it without delivery, counts
// it in Stats.Discarded and returns how many messages it discarded. The
// closed state lives in the mailbox's shared words (in the file, for a
// mailbox placed there), so that senders in other processes see it. Every
// send loads the state again after claiming its space and gives the space
// up if the mailbox was closed meanwhile (ErrClosed): a send whose claim
// came before Close is delivered (or discarded and counted) by a later
// Drain, and once the consumer has seen the mailbox closed and empty,
// nothing can arrive any more. An actor then ends by itself
// (agent.ErrDone; WithEndOfStream). Nothing is dropped silently: an
// actor's OnClose returns ErrNotDrained when messages are left (an
// aborting handler, or a claim open at the head that stops a drain or a
// discard).
//
// A mailbox whose Host takes its memory away (ipc.MailboxFile.Close) is
// detached first: from then on its methods return ErrClosed and Stats the
// last statistics, without touching that memory. Close the Host once this
// process has stopped using the mailbox: a call racing it may still touch
// the memory.
//
// # Statistics
//
// Stats, from any goroutine. With Config.Counters the consumer also
// publishes them as counters (at each heartbeat) that other processes
// read: cmd/dutystat, its Prometheus exporter.
//
// # Allocation
//
// Send, SendParts, Claim, ClaimParts, Sender's methods, and
// Drain allocate nothing in the steady state, wherever the mailbox lives
// (the reassembly buffer and the parts slice grow to the largest message
// seen, then are reused). Mailbox.SendContext borrows an idle strategy from
// a pool when it has to wait; Sender.SendContext uses its own.
package mailbox
