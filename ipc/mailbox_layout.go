package ipc

// The byte layout of a cross-process mailbox file. This file is the only
// place these numbers are written; mailbox_test.go asserts them against the
// bytes CreateMailbox writes, and docs/ipc.md ("Cross-process mailbox")
// has the table.
//
// A mailbox file is a KindRing file (layout.go): its single section is a
// ringbuf many-to-one ring, so ring tools (OpenRing, an Agrona consumer)
// still read it. The mailbox adds three of the header's spare slots, each a
// 128-byte line of its own, grouped by who writes them:
//
//	spare slot 0 (file offset 512): read-mostly, every send loads the state
//	   +0  int64 state word (mailbox.StateOpen 0, StateClosedDrain 1,
//	             StateClosedDiscard 2): the owner raises it at Close
//	   +8  int32 mailbox layout version (MailboxLayoutVersion): 0 until the
//	             creator has written the words below; stored last,
//	             atomically: the "mailbox ready" signal
//	   +12 int32 reserved (0)
//	   +16 int64 max message size (body bytes; mailbox.Config.MaxMessageSize)
//	   +24 int64 max parts (mailbox.Config.MaxParts)
//	   +32 int64 consumer timeout (ms): a consumer heartbeat older than this
//	             makes back-pressured senders report ErrConsumerDead
//	   +40 int64 unblock timeout (ms): how long the consumer waits at a torn
//	             claim (informational for senders)
//	spare slot 1 (file offset 640): statistics the consumer writes
//	   +0  int64 delivered   +8 max depth   +16 torn   +24 corrupt
//	   +32 int64 discarded
//	spare slot 2 (file offset 768): statistics senders write (atomic adds)
//	   +0  int64 back-pressured   +8 refused (closed)
//
// The consumer heartbeat is the ring's own consumerHeartbeat word (ring
// trailer, capacity + 640: Agrona's, epoch ms), and the consumer's process
// is the file's owner (pid and start time in the file header).
const (
	// MailboxLayoutVersion is the mailbox layout version this package
	// writes and the highest it reads.
	MailboxLayoutVersion int32 = 1

	// MailboxHeaderSlot, MailboxConsumerStatsSlot and MailboxSenderStatsSlot
	// are the spare slots (File.SpareSlot) a mailbox uses.
	MailboxHeaderSlot        = 0
	MailboxConsumerStatsSlot = 1
	MailboxSenderStatsSlot   = 2

	// Offsets in the header slot.
	MailboxStateOffset           = 0
	MailboxVersionOffset         = 8
	MailboxMaxMessageSizeOffset  = 16
	MailboxMaxPartsOffset        = 24
	MailboxConsumerTimeoutOffset = 32
	MailboxUnblockTimeoutOffset  = 40

	// Offsets in the consumer statistics slot.
	MailboxDeliveredOffset = 0
	MailboxMaxDepthOffset  = 8
	MailboxTornOffset      = 16
	MailboxCorruptOffset   = 24
	MailboxDiscardedOffset = 32

	// Offsets in the sender statistics slot.
	MailboxBackPressuredOffset = 0
	MailboxRefusedClosedOffset = 8
)

// Bounds a mailbox header read from a file must respect: values outside
// them are ErrCorrupt (a correct creator never writes them).
const (
	// maxMailboxParts bounds the part count a header may declare.
	maxMailboxParts = 1 << 20
	// maxMailboxTimeoutMs bounds the timeouts a header may declare (one
	// day): a larger one is not a liveness timeout.
	maxMailboxTimeoutMs = 24 * 3600 * 1000
)
