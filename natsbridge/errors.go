package natsbridge

import (
	"errors"

	"github.com/dutyrt/duty/internal/sentinel"
)

var (
	// ErrForeign reports a payload on a bridged subject that is not a batch
	// frame: another magic, or too short to hold one.
	// The inbound side drops it, counts it in Stats.Rejected and goes on.
	ErrForeign = errors.New("natsbridge: not a batch frame")
	// ErrVersion reports a batch frame of a version this package does not
	// read (it reads version 2): a bridge of another release on the subject. The
	// inbound side refuses it whole, counts it in Stats.Rejected and goes
	// on; upgrade both ends of a subject together.
	ErrVersion = errors.New("natsbridge: batch frame of another version")
	// ErrMalformed reports a batch frame that does not hold together
	// (lengths, count, checksum, ranges). It is dropped whole and counted in
	// Stats.Rejected. It matches duty.ErrCorrupt.
	ErrMalformed = sentinel.Corrupt("natsbridge: malformed batch frame")
	// errBatchFull reports a message that does not fit what is left of a
	// batch. It is returned unwrapped, without allocating.
	errBatchFull = errors.New("natsbridge: batch full")
	// ErrTooLarge reports a message that does not fit an empty batch: it
	// can never be bridged with this batch capacity.
	ErrTooLarge = errors.New("natsbridge: message larger than a batch")
	// ErrLost reports messages the outbound bridge took from its source and
	// could not publish, or whose publication the server did not confirm,
	// when it closed or its connection closed for good: OnClose returns it
	// (wrapped, with the count and the cause), and the messages are counted
	// in Stats.LostMessages.
	ErrLost = errors.New("natsbridge: messages lost")
	// ErrDenied reports a subject the NATS server does not permit the
	// bridge's user to publish to or subscribe to (nats.ErrPermissionViolation,
	// also wrapped): NewInbound returns it, an outbound bridge's DoWork ends
	// the agent with it.
	ErrDenied = errors.New("natsbridge: subject not permitted")
	// ErrConfig reports an invalid configuration.
	ErrConfig = errors.New("natsbridge: invalid config")
)
