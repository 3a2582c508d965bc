// Package mailframe holds the byte layout of a mailbox's framed records and
// of its checksum prefix (package mailbox writes and reads them; its
// frame.go and checksum.go explain them, docs/layouts.md lists them), for
// the code outside package mailbox that must lay a record out by hand: the
// tests that forge a dead sender's half-written message.
package mailframe

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
