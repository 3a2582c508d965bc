package publication

import "github.com/dutyrt/duty/internal/record"

// The byte layout of an IPC publication file (ipc.KindPublication). This
// file is the only place these numbers are written; layout_test.go asserts
// them against the tables in docs/publication.md and docs/layouts.md and
// against the bytes a publication actually writes. Nothing outside this
// package reads them: they are unexported, and the docs are the reference
// for other readers of the file.
//
// A publication file has three sections (after the 4096-byte file header
// of the file layer, ipc's layout.go):
//
//	section 0  the log: capacity bytes (a power of two) of Agrona records
//	           (internal/record's format, ringbuf's: int32 length, negative while
//	           claimed; int32 type, -1 for padding; 8-byte alignment). No
//	           ring trailer: positions live in the metadata section.
//	section 1  metadata, metadataLength bytes:
//	              0 int32 publication layout version, stored last by the
//	                      creator (0: not ready yet)
//	              4 int32 max subscribers (slots in section 2)
//	              8 int64 log capacity
//	             16 int64 window (bytes a publisher may run ahead of the
//	                      slowest subscriber, <= capacity/2)
//	             24 int32 MTU: longest record of one fragment, header included
//	             28 int32 max message length (payload bytes)
//	             32 int64 subscriber timeout (ms)
//	             40 int64 unblock timeout (ms)
//	             48 int64 max position
//	            128 int64 tail position (publishers, CAS); bit 62 = sealed
//	                      (end of stream: the publication was closed)
//	            256 int64 publisher limit (owner)
//	            264 int32 connected: 1 when the last limit update saw an
//	                      active subscriber (owner)
//	            384 int64 clean position: the log is zero behind it up to a
//	                      lap (owner)
//	            392 int64 clean sequence: odd while the owner updates the
//	                      limit (scan, clean), even otherwise
//	            512 int64 end-of-stream position (owner, at Close)
//	            640 int64 next registration id (subscribers, atomic add)
//	            648 int32 slots in use: 1 + highest slot index ever claimed
//	                      (raised by a joiner before its claim)
//	            656 int64 publishers opened by other processes (Open)
//	            768 int64 dropped subscribers (owner)
//	            776 int64 unblocked claims (subscribers)
//	            784 int64 freed slots (owner: dropped or abandoned joins reclaimed)
//	            896 int64 offers that returned ErrBackPressured (publishers)
//	            904 int64 offers that returned ErrNotConnected (publishers)
//	            912 int64 offers that returned ErrAdminAction (owner)
//	section 2  subscriber table: max subscribers slots of slotLength
//	           bytes, each its own two cache lines:
//	              0 int64 state word: the holder's registration id <<
//	                      slotRegistrationShift | state (slotFree,
//	                      slotJoining, slotActive, slotDropped); 0 = free.
//	                      Changed only by CAS from an exact value (see
//	                      slot in file.go), so a slot is never freed or
//	                      taken over by a party that looked at an
//	                      earlier holder
//	              8 int64 position (subscriber, release store after a poll)
//	             16 int64 heartbeat (ms since the Unix epoch, subscriber)
//	             24 int64 reserved, 0 (the registration id in layout 1)
//	             32 int64 pid
//	             40 int64 process start time (clock ticks since boot)
//	             48 int64 join position
//	             56 int64 messages the subscriber dropped as inconsistent
const (
	// layoutVersion is the publication layout version in the metadata.
	// Version 2 packs the slot's state and registration id into one word
	// (version 1 had an int32 state at 0 and the registration id at 24).
	layoutVersion int32 = 2

	// metadataLength is the length of the metadata section.
	metadataLength = 4096

	versionOffset           = 0
	maxSubscribersOffset    = 4
	capacityOffset          = 8
	windowOffset            = 16
	mtuOffset               = 24
	maxMessageOffset        = 28
	subscriberTimeoutOffset = 32
	unblockTimeoutOffset    = 40
	maxPositionOffset       = 48
	tailOffset              = 128
	limitOffset             = 256
	connectedOffset         = 264
	cleanPositionOffset     = 384
	cleanSequenceOffset     = 392
	endOfStreamOffset       = 512
	nextRegistrationOffset  = 640
	slotsInUseOffset        = 648
	externalOffset          = 656
	droppedOffset           = 768
	unblockedOffset         = 776
	freedOffset             = 784
	backPressuredOffset     = 896
	notConnectedOffset      = 904
	adminActionOffset       = 912

	// slotLength is the length of one subscriber slot.
	slotLength = 128

	// slotStateOffset is the slot's state word (int64): the holder's
	// registration id shifted left by slotRegistrationShift, or-ed with
	// the state in the bits below. A free slot's word is 0.
	slotStateOffset       = 0
	slotRegistrationShift = 8
	slotPositionOffset    = 8
	slotHeartbeatOffset   = 16
	slotPIDOffset         = 32
	slotStartTimeOffset   = 40
	slotJoinOffset        = 48
	slotDroppedOffset     = 56

	// Slot states, in the low bits of the state word.
	slotFree    int32 = 0
	slotJoining int32 = 1
	slotActive  int32 = 2
	slotDropped int32 = 3

	// maxRegistrationID is the largest registration id that fits the
	// state word.
	maxRegistrationID int64 = 1<<(63-slotRegistrationShift) - 1

	// sealedBit marks the tail of a closed publication: no claim succeeds
	// once it is set, and the tail without it is the end of the stream.
	sealedBit int64 = 1 << 62

	// Fragment flags, in the type word of a record (the record core's
	// type-id scheme, internal/record). A message longer than the MTU
	// allows is written as several records (fragments), claimed together
	// and published with one store: every fragment's type is the message
	// type with fragmentFlag set, beginFlag on the first and endFlag on the
	// last. A message that fits one record carries no flag: it is a plain
	// Agrona record.
	fragmentFlag = record.FlagFramed
	beginFlag    = record.FlagBegin
	endFlag      = record.FlagEnd
)

// Limits and defaults of a publication.
const (
	// maxTypeID is the largest message type id a publication accepts: the
	// record core's user type ids (the bits above them hold the fragment
	// flags, or are reserved).
	maxTypeID = record.MaxTypeID

	// minCapacity and maxCapacity bound the log.
	minCapacity = 1024
	maxCapacity = 1 << 30
	// defaultMaxSubscribers is the default number of subscriber slots.
	defaultMaxSubscribers = 16
	// maxSubscribersLimit bounds the number of subscriber slots.
	maxSubscribersLimit = 1024
	// defaultMTU is the default longest record of one fragment (header
	// included), capped at capacity/8.
	defaultMTU = 4096
)

// flagBits are the bits of a type id above maxTypeID: the fragment flags
// and the reserved bits, which no publisher sets.
const flagBits = record.FlagBits

// foreignBits are the type id bits no publisher sets: the reserved ones
// and the mailbox's checksum flag. A record carrying one is dropped.
const foreignBits = record.FlagsReserved | record.FlagChecked
