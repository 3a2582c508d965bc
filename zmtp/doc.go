// Package zmtp speaks ZMTP 3.1, ZeroMQ's wire protocol, over TCP and
// Unix-domain sockets, so that duty's agents exchange messages with other
// hosts and with libzmq and its bindings in any language, with no broker.
// It offers PUSH, PULL, PUB, SUB, DEALER, ROUTER, REQ, REP and PAIR sockets
// (REQ and REP with libzmq's strict alternation) with the NULL
// security mechanism or CURVE (Options.Curve: encryption, and a server
// that admits clients by their public keys; docs/zmtp.md, "CURVE"), and
// bridges that join a socket to a mailbox.
//
//	pull, _ := zmtp.NewSocket(zmtp.Pull, zmtp.Options{})
//	ep, _ := pull.Bind("tcp://127.0.0.1:0")     // or "ipc:///path"
//	push, _ := zmtp.NewSocket(zmtp.Push, zmtp.Options{HWM: 1000})
//	_ = push.Connect(ep)                         // dials in the background, reconnects
//	err := push.Send(hdr, body)                  // nil, ErrHWM or ErrClosed; never blocks
//	var m zmtp.Message
//	err = pull.Recv(ctx, &m)                     // m.Parts() valid until the next Recv into m
//
// # Who calls what
//
// A Socket's methods may be called from any goroutine. Each connection's
// network I/O runs on two goroutines of the socket (a reader and a
// writer), but for two calls that may block and do it themselves:
// SendContext writes a message when the socket is idle, and Recv reads
// the connection when the socket has one peer and nothing is queued (the
// read side has one owner at a time; docs/zmtp.md, "Receiving without a
// hand-off"). Bind adds an accepting goroutine, Connect a dialing one.
// Close ends them all before it returns. A Message is used by one goroutine at a
// time. A Feeder (from a mailbox) and a PollFeeder (from an IPC
// subscription, or any ControlledPoller) are agents: one goroutine calls
// their DoWork, which never blocks; a Feeder's goroutine is the consumer
// of its mailbox.
//
// # Sending
//
// Send copies the message (one or more parts) and returns at once: nil,
// ErrHWM (a PUSH socket holding Options.HWM messages: nothing was queued),
// ErrClosed, or ErrSocketKind on a receiving socket. A PUSH socket's
// messages wait in one queue until the writer of any connected peer takes
// them, so they survive until a peer connects; a PUB socket queues a copy
// for every peer whose subscriptions match the first part, and drops it for
// a subscriber whose queue is full (Stats.Dropped). Send allocates
// nothing. SendContext is Send for a goroutine that may block: at a PUSH
// or DEALER socket's high-water mark it waits for room until its context
// ends, and when the socket is idle it may write the message itself
// (never do that in a duty cycle: use Send there). A message with a part
// of 8 KiB or more it writes itself whenever nothing is
// queued or being written and a peer is connected: the large parts by
// reference, with one vectored write (writev), no copy, and it returns
// once they are written (or lost with the connection; an end of its
// context during the write ends the connection).
//
// Who owns a message's bytes: the caller, again, as soon as Send or
// SendContext returns, whichever path the message took. The socket keeps
// no reference to them (a copy waits in the queue, or the write is done),
// so the caller may reuse or change its buffers at once. While
// SendContext runs they must not change.
//
// # Receiving
//
// Recv waits until a message arrives, ctx ends or the socket closes, and
// copies it into the caller's Message; Drain hands what has arrived to a
// handler without waiting, one lock for the batch (for a stream, or an
// agent's duty cycle), the parts valid during the call only. The receive
// queue holds Options.HWM messages; while it is full, the readers stop
// reading and the peers' sends back up through TCP. On a socket with one
// peer and nothing queued, Recv reads and decodes the connection itself
// (no goroutine hand-off), and Drain hands out what that decoder holds
// already, in place; the peer's reader goroutine takes the read side back
// when no Recv comes for a millisecond, so heartbeats and the queue go on
// without a receiver. A message's bytes are copied once on the way to a
// Message: from the decoder (Recv reading itself), or, for a large
// message, by the reader into a buffer of its own that the Message then
// takes over; a small message through the queue twice (into the queue's
// buffer, then the Message). DeliverTo replaces the queue with a mailbox
// (docs/zmtp.md, "Bridges to mailboxes").
//
// # Delivery
//
// A message is delivered whole or not at all: a connection that ends
// within a message delivers nothing of it (Stats.Torn). Delivery is at most
// once: the messages of a write into a connection that then fails are lost
// (Stats.Lost), never sent again. The messages of one connection arrive in
// the order they were sent.
//
// # Closing
//
// Close refuses new messages at once (Send, SendContext, Recv and Drain
// return ErrClosed, waiting calls included), then waits up to
// Options.Linger (DefaultLinger; NoLinger: not at all) for the messages
// still queued to be written, the socket dialing, accepting and writing
// meanwhile, as libzmq's ZMQ_LINGER. CloseContext waits until its context
// ends instead. What is still queued when the wait ends is discarded,
// counted in Stats.Unsent, and reported by Close as an error wrapping
// ErrUnsent.
//
// # Subscriptions
//
// A SUB counts its subscriptions (each Subscribe undone by one
// Unsubscribe) and sends SUBSCRIBE when a prefix's count goes from 0 to 1,
// CANCEL when it goes back to 0; a PUB keeps a set of prefixes per
// subscriber, where a repeated SUBSCRIBE changes nothing and one CANCEL
// removes the prefix. Both are libzmq's rules, so either end may be
// libzmq.
//
// # Peers that misbehave
//
// A peer that breaks the protocol, sends a message larger than
// Options.MaxMessageSize or falls silent beyond Options.HeartbeatTimeout is
// disconnected with an error wrapping ErrProtocol, ErrTooLarge or
// ErrPeerTimeout, logged and counted (Stats.PeerErrors); one refused in
// the handshake is counted in Stats.Rejected. With CURVE, a handshake
// command or a MESSAGE whose box does not open, or a MESSAGE replayed,
// ends the connection the same way (ErrCrypto, wrapped), and a client
// whose key the server does not admit is refused (ErrAuth,
// Stats.AuthRefused); nothing such a peer sent is delivered. The socket goes on serving
// its other peers. No input from a peer makes the decoder panic or
// hold more than twice the sum of the largest message, its frame headers
// and 64 KiB.
//
// # Allocation
//
// Once a connection is up, a message costs no allocation: Send,
// SendContext (its vectored write included), the writer's encoding, the
// reader's decoding, Recv, Drain, and a bridge's delivery into a mailbox.
// A send queue is a ring sized from the high-water mark when the socket
// (or, for PUB and ROUTER, the peer) is made; a message too large for it
// (more than 4 KiB of frames) is copied into a buffer of the queue's own;
// eight such buffers of up to 1 MiB are kept for the next ones. The receive queue's buffers, a Message's and the
// decoder's grow to the largest batch or message seen, then are reused; a
// large message through the
// receive queue takes a buffer that an earlier one gave back, or a new one
// when none fits. A Recv that reads the connection itself with a context
// that can end watches that context (context.AfterFunc), once per
// distinct context: a loop of Recv with one context allocates nothing.
// Because SendContext may hand the kernel a caller's
// bytes by reference, the compiler keeps them on the heap: a buffer on the
// caller's stack moves there.
package zmtp
