package natsbridge

import (
	"errors"

	"github.com/dutyrt/duty/internal/sentinel"
)

var (
	// ErrForeign reports a payload on a bridged subject that is not a batch
	// frame this package reads: another magic, another version, too short.
	// The inbound side drops it, counts it in Stats.Rejected and goes on.
	ErrForeign = errors.New("natsbridge: not a batch frame")
	// ErrMalformed reports a batch frame that does not hold together
	// (lengths, count, checksum, ranges). It is dropped whole and counted in
	// Stats.Rejected. It matches duty.ErrCorrupt.
	ErrMalformed = sentinel.Corrupt("natsbridge: malformed batch frame")
	// ErrBatchFull reports a message that does not fit what is left of a
	// batch. It is returned unwrapped, without allocating.
	ErrBatchFull = errors.New("natsbridge: batch full")
	// ErrTooLarge reports a message that does not fit an empty batch: it
	// can never be bridged with this batch capacity.
	ErrTooLarge = errors.New("natsbridge: message larger than a batch")
	// ErrConfig reports an invalid configuration.
	ErrConfig = errors.New("natsbridge: invalid config")
)
