// Package mailbox is a bounded many-to-one mailbox for agents: any number
// of goroutines (or processes sharing the ring through package ipc) send
// messages, and the one goroutine that owns the mailbox drains them inside
// its duty cycle. It is built on ringbuf.ManyToOne, Agrona's many-to-one
// ring, and keeps its byte layout: a plain message is an ordinary ring
// record that an Agrona consumer can read.
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
//     SendTyped, Close(Drain), Stats and the accessors: any goroutine, at
//     any time.
//   - A Sender: one goroutine at a time (it keeps a sequence number and an
//     idle strategy). Create one per sending goroutine with NewSender.
//   - Drain, Close(Discard), DiscardQueued: exactly one goroutine, the
//     owner (typically the agent whose DoWork drains: see Actor). They
//     read and release the ring; two concurrent drains corrupt it.
//
// # Sending
//
// No send blocks except the ...Context variants. The outcome is one of:
// nil (accepted: the message will be delivered exactly once, after every
// message this goroutine sent before), ErrBackPressured (the ring has no
// room now; nothing was sent), ErrClosed, ErrTooLong (above
// MaxMessageSize, or MaxClaimLength for a claim), all unwrapped and
// without allocation, or a validation error wrapping ErrTypeID, ErrParts or
// ErrLength. Back-pressure is the normal signal of a consumer that does not
// keep up: the sender decides whether to retry, wait (SendContext, which
// idles with a back-off strategy until accepted, ctx ends, or the mailbox
// closes), or drop. Refusals are counted in Stats.BackPressured.
//
// Claim and ClaimParts give ring space to write in place (zero copy); the
// caller must then Commit or Abort on every path. SendTyped does it for a
// fixed-layout Encoder. The send methods copy the payload before they
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
// frame.go and docs/mailbox.md describe the framing.
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
// # Closing
//
// Close refuses new sends at once. Close(Drain) leaves what is queued for
// the owner to drain; Close(Discard) consumes it without delivery, counts
// it in Stats.Discarded and returns how many messages it discarded. The
// closed state lives in a word that can be supplied (Config.State), so that
// senders in other processes see it. A send that passed the state check
// just before Close may land after it; the owner's next Drain delivers or
// discards (and counts) it. Nothing is dropped silently: an Actor's
// OnClose returns ErrNotDrained when messages are left (an aborting
// handler, or a claim open at the head that stops a drain or a discard);
// a send that lands after OnClose returned stays in the ring, uncounted
// (visible in Stats.Depth), as nobody drains a closed actor's mailbox.
//
// # Allocation
//
// Send, SendParts, Claim, ClaimParts, SendTyped, Sender's methods, and
// Drain allocate nothing in the steady state (the reassembly buffer and
// the parts slice grow to the largest message seen, then are reused).
// Mailbox.SendContext borrows an idle strategy from a pool when it has to
// wait; Sender.SendContext uses its own.
package mailbox
