// Package mailboxdef holds the numbers of package mailbox that other
// packages of duty need: the ring capacity bounds and defaults a host of a
// mailbox (package ipc's mailbox file) lays its file out with, and the
// byte layout of a mailbox's framed records and checksum prefix (package
// mailbox writes and reads them through internal/mailboxframe, which
// explains them; docs/layouts.md lists them), for the tests that forge a
// dead sender's half-written message; and the state word's value a host
// stores when it has proved the consumer's process gone.
package mailboxdef

import "time"

const (
	// MinCapacity is the smallest ring capacity a mailbox accepts: its
	// records must carry a frame header and a useful fragment.
	MinCapacity = 1024
	// DefaultCapacity is the ring capacity of a mailbox whose Config
	// leaves it 0.
	DefaultCapacity = 64 * 1024
	// DefaultUnblockTimeout is how long the consumer position may stay
	// still, at an open claim, before the claim is released as torn,
	// when a Config leaves it 0.
	DefaultUnblockTimeout = 5 * time.Second
)

const (
	// HeaderLength is the length of the frame header at the start of every
	// framed record's payload.
	HeaderLength = 32
	// Offsets in the frame header.
	KeyOffset        = 0
	SequenceOffset   = 8
	IndexOffset      = 16
	CountOffset      = 20
	BodyLengthOffset = 24
	PartsOffset      = 28

	// PartLengthPrefix is the length of the prefix of each part in the body
	// of a multipart message.
	PartLengthPrefix = 4

	// ChecksumLength is the length of the checksum prefix of a checksummed
	// record's payload.
	ChecksumLength = 8
)

const (
	// StateOffset is the offset of the state word in a mailbox's shared
	// words (an int64: 0 open, 1 closed (drain), 2 closed (discard)).
	StateOffset = 0
	// StateOpen is the state word of an open mailbox.
	StateOpen int64 = 0
	// StateDrain and StateDiscard are the state words of a mailbox its
	// consumer closed, draining or discarding what is queued.
	StateDrain   int64 = 1
	StateDiscard int64 = 2
	// StateConsumerDead is the state word of a mailbox whose consumer's
	// process a host has proved gone (its lock free, its pid and start
	// time not running): every send in every process is refused with
	// mailbox.ErrConsumerDead, as after a close. The host raises it from
	// StateOpen only, by a compare-and-swap; it is never lowered.
	StateConsumerDead int64 = 4
)
