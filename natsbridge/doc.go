// Package natsbridge carries mailbox messages between hosts over NATS
// (github.com/nats-io/nats.go): an Outbound agent drains a local mailbox
// (or polls an IPC publication's subscription) and publishes batch frames
// to a subject; an Inbound bridge delivers the frames of a subject into a
// local mailbox. docs/natsbridge.md explains
// the wire format, the guarantees per mode and the failure handling.
//
// # Frames
//
// One NATS message carries many duty messages (frame.go; docs/natsbridge.md,
// "Batch frame"): type ids, parts and order, a source id, a per-source
// batch sequence and the sequence of the batch's first message. The encoder
// allocates nothing; Reader checks a whole frame before it yields
// a message and rejects a foreign payload (ErrForeign), a frame of another
// version (ErrVersion) or a broken frame (ErrMalformed, a duty.ErrCorrupt)
// whole.
//
// # Who calls what
//
// Outbound and Inbound are agents (package agent): one driver (a runner,
// an Invoker, a composite from agent.NewComposite) calls OnStart, DoWork
// and OnClose from one goroutine. NewOutbound and NewInbound connect (or use Config.Conn) and
// set up the stream and consumer, bounded by their context; OnClose ends
// the bridge and closes a connection it opened. Stats is safe from any
// goroutine. The Outbound is the only consumer of its mailbox; the Inbound
// is one more sender of its mailbox. Package natsbridge/natsfx builds
// bridges for an fx app and hands them to dutyfx.Runners.
//
// DoWork never waits on the network. Outbound: a batch is sealed as soon
// as a drain leaves the mailbox empty (no waiting for more, Nagle off),
// or, while more is queued, when full or when its first message has
// waited Config.FlushInterval, and handed to
// the client only while the client's buffer has room; otherwise it waits
// for a later cycle and the mailbox fills (its senders see
// mailbox.ErrBackPressured). Inbound in JetStream mode: a batch is pulled
// only when the mailbox has room for one, delivered across as many cycles
// as the mailbox needs, and acknowledged after it is delivered whole.
//
// # Guarantees
//
// Core NATS mode (Config.JetStream nil) is at most once, and every loss is
// counted: messages a full mailbox refused (Stats.Dropped); at the
// receiver, messages missing from a source's message sequence, between two
// batches or before the first batch it sees from the source (sent before
// it subscribed), in Stats.LostMessages; at the sender, messages it could
// not publish or whose publication no flush confirmed when it closed, in
// its Stats.LostMessages, with OnClose returning ErrLost. Frames of
// another version (ErrVersion) or not frames at all are refused and
// counted (Stats.Rejected). Authentication and authorization are the NATS
// server's (credentials and TLS in Config.Options); a subject the bridge
// may not use is ErrDenied. JetStream mode delivers every published message
// into the mailbox exactly once and in order, across reconnects, server
// restarts and bridge restarts: message ids deduplicate republished
// batches, the consumer hands out one batch at a time (MaxAckPending 1),
// and the inbound side skips a redelivered batch whose stream sequence is
// at or below the last one it delivered (its high-water sequence, which
// starts at the consumer's ack floor). docs/natsbridge.md, "Inbound:
// delivery per mode" gives the argument and "Limitations" its limits.
package natsbridge
