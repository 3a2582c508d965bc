// Package natsbridge carries mailbox messages between hosts over NATS.
//
// The wire format is a batch frame (frame.go; docs/natsbridge.md, "Batch
// frame"): many duty messages, with their type ids and parts, in one NATS
// message, with a source id and a per-source batch sequence. Batch encodes
// without allocating; Reader checks a whole frame before yielding its
// first message and rejects foreign payloads (ErrForeign) and broken
// frames (ErrMalformed, a duty.ErrCorrupt) whole.
package natsbridge
