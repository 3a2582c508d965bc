package ipcfile

import (
	"sync/atomic"

	"github.com/dutyrt/duty/internal/atomicbuf"
)

// The byte layout of a mailbox file. This file is the only place these
// numbers are written; ipc's mailbox_test.go asserts them against the bytes
// CreateMailbox writes, and docs/ipc.md ("Mailbox file") has the table.
//
// A mailbox file is a ring file (ipc.KindRing, layout.go): its single section is the
// mailbox's many-to-one ring, so ring tools (OpenRing, an Agrona consumer)
// still read it. The mailbox uses four of the header's spare slots:
//
//	spare slot 0 (file offset 512): the mailbox header, written by the
//	   creator before the version, read-only after
//	   +0  int64 reserved (0)
//	   +8  int32 mailbox layout version (MailboxLayoutVersion): 0 until the
//	             creator has written the words below; stored last,
//	             atomically: the "mailbox ready" signal
//	   +12 int32 reserved (0)
//	   +16 int64 max message size (body bytes; mailbox.Config.MaxMessageSize)
//	   +24 int64 max parts (mailbox.Config.MaxParts)
//	   +32 int64 consumer timeout (ms): a consumer heartbeat older than this
//	             makes back-pressured senders report mailbox.ErrConsumerDead
//	   +40 int64 unblock timeout (ms): how long the consumer waits at a torn
//	             claim (informational for senders)
//	   +48 int64 flags: bit 0 = every record carries a checksum
//	             (mailbox.Config.Checksum); no other bit is set
//	spare slots 1-3 (file offsets 640-1023): the mailbox's shared words
//	   (mailbox.WordsLength bytes: its state word and statistics, laid
//	   out by package mailbox; docs/layouts.md)
//
// The consumer heartbeat is the ring's own consumerHeartbeat word (ring
// trailer, capacity + 640: Agrona's, epoch ms), and the consumer's process
// is the file's owner (pid and start time in the file header).
const (
	// MailboxLayoutVersion is the mailbox layout version this package
	// writes and the highest it reads. Version 2 moved the state word and
	// the statistics into the mailbox's own shared words (slots 1-3).
	MailboxLayoutVersion int32 = 2

	MailboxHeaderSlot = 0
	MailboxWordsSlot  = 1 // the first of the mailbox.WordsLength/SpareSlotLength slots of the shared words

	MailboxVersionOffset         = 8
	MailboxMaxMessageSizeOffset  = 16
	MailboxMaxPartsOffset        = 24
	MailboxConsumerTimeoutOffset = 32
	MailboxUnblockTimeoutOffset  = 40
	MailboxFlagsOffset           = 48

	// MailboxFlagChecksum is the flags' bit for mailbox.Config.Checksum.
	MailboxFlagChecksum int64 = 1
)

// Bounds a mailbox header read from a file must respect: values outside
// them are ErrCorrupt (a correct creator never writes them).
const (
	// MaxMailboxParts bounds the part count a header may declare.
	MaxMailboxParts = 1 << 20
	// MaxMailboxTimeoutMs bounds the timeouts a header may declare (one
	// day): a larger one is not a liveness timeout.
	MaxMailboxTimeoutMs = 24 * 3600 * 1000
)

// MailboxHeader is a mailbox's header words in spare slot
// MailboxHeaderSlot, over the mapping.
type MailboxHeader struct {
	Version                                                      *atomic.Int32
	MaxMessage, MaxParts, ConsumerTimeout, UnblockTimeout, Flags *atomic.Int64
}

// MailboxHeaderOf returns the mailbox header words over slot, the spare
// slot MailboxHeaderSlot of a mapped file.
func MailboxHeaderOf(slot []byte) (MailboxHeader, error) {
	var h MailboxHeader
	s, err := atomicbuf.New(slot)
	if err != nil {
		return h, err
	}
	h.Version = s.Int32At(MailboxVersionOffset)
	h.MaxMessage = s.Int64At(MailboxMaxMessageSizeOffset)
	h.MaxParts = s.Int64At(MailboxMaxPartsOffset)
	h.ConsumerTimeout = s.Int64At(MailboxConsumerTimeoutOffset)
	h.UnblockTimeout = s.Int64At(MailboxUnblockTimeoutOffset)
	h.Flags = s.Int64At(MailboxFlagsOffset)
	return h, nil
}
