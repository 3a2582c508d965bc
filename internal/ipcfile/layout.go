// Package ipcfile is the bytes of package ipc's shared files: the header
// every duty file starts with (its layout, the encoder that writes it in
// the order that makes it ready atomically, the decoder that checks every
// field a foreign process could have written), and the mailbox file's
// header in the spare slots. Package ipc creates, maps, opens, owns and
// removes the files; this package only says what their first page holds.
// docs/ipc.md has the tables.
package ipcfile

import "github.com/dutyrt/duty/internal/fileapi"

// The byte layout of a duty shared-memory file. This file is the only place
// these numbers are written; ipc's layout_test.go asserts them against the
// table in docs/ipc.md and against the bytes Create actually writes.
//
// A file is a HeaderLength-byte header followed by up to MaxSections
// sections, each starting on a SectionAlignment boundary. All words are
// little-endian (the native order of every platform duty supports).
//
//	   0  [8]byte magic "DUTYSHM\x00"
//	   8  int32   layout version: 0 while the file is being created; stored
//	              last, atomically, as the "ready" signal
//	  12  int32   file kind (KindRing, ...)
//	  16  int32   header length (headerLength)
//	  20  int32   section count (1..MaxSections)
//	  24  int32   section alignment (sectionAlignment)
//	  28  int32   reserved (0)
//	  32  int64   file length in bytes
//	  40  int64   owner pid
//	  48  int64   owner start time (Linux: clock ticks since boot, /proc/<pid>/stat
//	              field 22; darwin: kinfo_proc p_starttime in µs since the epoch;
//	              0: unknown)
//	  56  int64   creation time (ms since the Unix epoch)
//	  64  int64   owner liveness timeout (ms): the owner heartbeats more often
//	  72  ..128   reserved (0)
//	 128  int64   owner heartbeat (ms since the Unix epoch; -1 once the owner closed)
//	 136  ..256   reserved (0): the heartbeat has its 128-byte slot to itself
//	 256  section table, maxSections entries of sectionEntryLength bytes:
//	        +0 int64 offset, +8 int64 length (offset 0 and length 0: unused)
//	 384  ..512   reserved (0)
//	 512  spare slots, spareSlotCount × spareSlotLength bytes, zero at
//	      creation, for later users (a mailbox's closed state, consumer
//	      liveness words, ...): each slot is a 128-byte line of its own
//	1536  ..4096  reserved (0)
//	4096  section 0 (for KindRing: a ringbuf many-to-one ring, capacity+768)
const (
	// Magic is the first 8 bytes of every duty file.
	Magic = "DUTYSHM\x00"

	// LayoutVersion is the layout version this package writes and the
	// highest it reads.
	LayoutVersion int32 = 1

	// HeaderLength is the length of the header: one 4 KiB page.
	HeaderLength = 4096
	// SectionAlignment is the alignment of every section's offset, and the
	// unit the file length is rounded up to.
	SectionAlignment = 4096
	// MaxSections is the number of entries in the section table.
	MaxSections = 8

	MagicOffset            = 0
	VersionOffset          = 8
	KindOffset             = 12
	HeaderLengthOffset     = 16
	SectionCountOffset     = 20
	SectionAlignmentOffset = 24
	FileLengthOffset       = 32
	OwnerPIDOffset         = 40
	OwnerStartTimeOffset   = 48
	CreatedOffset          = 56
	LivenessTimeoutOffset  = 64
	HeartbeatOffset        = 128

	// SectionTableOffset is the offset of the section table.
	SectionTableOffset = 256
	// SectionEntryLength is the length of one section table entry.
	SectionEntryLength = 16
	// SectionOffsetField and SectionLengthField are the offsets of an
	// entry's words, relative to the entry.
	SectionOffsetField = 0
	SectionLengthField = 8

	// SpareSlotsOffset is the offset of the first spare slot.
	SpareSlotsOffset = 512
	// SpareSlotLength is the length of one spare slot (two cache lines).
	SpareSlotLength = 128
	// SpareSlotCount is the number of spare slots.
	SpareSlotCount = 8

	// HeartbeatClosed is the heartbeat value an owner stores when it closes
	// the file: it has stopped using it, whatever its process does next.
	HeartbeatClosed = fileapi.HeartbeatClosed
)

// AlignUp rounds n up to a multiple of a (a power of two).
func AlignUp(n, a int64) int64 { return (n + a - 1) &^ (a - 1) }

// SectionEntry returns the offset in the header of section i's table entry.
func SectionEntry(i int) int { return SectionTableOffset + i*SectionEntryLength }

// SpareSlot returns the offset in the header of spare slot i.
func SpareSlot(i int) int { return SpareSlotsOffset + i*SpareSlotLength }
