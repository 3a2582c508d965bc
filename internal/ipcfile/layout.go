package ipc

import "github.com/dutyrt/duty/internal/fileapi"

// The byte layout of a duty shared-memory file. This file is the only place
// these numbers are written; layout_test.go asserts them against the table
// in docs/ipc.md and against the bytes Create actually writes.
//
// A file is a headerLength-byte header followed by up to maxSections
// sections, each starting on a sectionAlignment boundary. All words are
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
	// fileMagic is the first 8 bytes of every duty file.
	fileMagic = "DUTYSHM\x00"

	// fileLayoutVersion is the layout version this package writes and the
	// highest it reads.
	fileLayoutVersion int32 = 1

	// headerLength is the length of the header: one 4 KiB page.
	headerLength = 4096
	// sectionAlignment is the alignment of every section's offset, and the
	// unit the file length is rounded up to.
	sectionAlignment = 4096
	// maxSections is the number of entries in the section table.
	maxSections = 8

	magicOffset            = 0
	versionOffset          = 8
	kindOffset             = 12
	headerLengthOffset     = 16
	sectionCountOffset     = 20
	sectionAlignmentOffset = 24
	fileLengthOffset       = 32
	ownerPIDOffset         = 40
	ownerStartTimeOffset   = 48
	createdOffset          = 56
	livenessTimeoutOffset  = 64
	heartbeatOffset        = 128

	// sectionTableOffset is the offset of the section table.
	sectionTableOffset = 256
	// sectionEntryLength is the length of one section table entry.
	sectionEntryLength = 16
	// sectionOffsetField and sectionLengthField are the offsets of an
	// entry's words, relative to the entry.
	sectionOffsetField = 0
	sectionLengthField = 8

	// spareSlotsOffset is the offset of the first spare slot.
	spareSlotsOffset = 512
	// spareSlotLength is the length of one spare slot (two cache lines).
	spareSlotLength = 128
	// spareSlotCount is the number of spare slots.
	spareSlotCount = 8

	// heartbeatClosed is the heartbeat value an owner stores when it closes
	// the file: it has stopped using it, whatever its process does next.
	heartbeatClosed = fileapi.HeartbeatClosed
)

// Kind says what a file's sections hold. It is stored in the header so that
// opening a file of the wrong kind is an error, not a misreading.
type Kind int32

const (
	// KindRing is a file whose single section is a ringbuf many-to-one ring
	// (capacity + ringbuf.TrailerLength bytes).
	KindRing Kind = 1
	// KindPublication is an IPC publication: log, metadata and subscriber
	// table (package ipc/publication, its layout.go).
	KindPublication Kind = 2
	// KindCounters is a counters file (countersfile.go).
	KindCounters Kind = 3
	// KindErrorLog is a distinct error log file (errlogfile.go): one
	// section holding an errlog buffer.
	KindErrorLog Kind = 4
	// KindHistograms is a latency histograms file (histogramfile.go): one
	// section holding histogram regions one after another.
	KindHistograms Kind = 5
	// kindUserMin is the first kind free for applications.
	kindUserMin Kind = 1 << 16
)

// alignUp rounds n up to a multiple of a (a power of two).
func alignUp(n, a int64) int64 { return (n + a - 1) &^ (a - 1) }

// sectionEntry returns the offset in the header of section i's table entry.
func sectionEntry(i int) int { return sectionTableOffset + i*sectionEntryLength }

// spareSlot returns the offset in the header of spare slot i.
func spareSlot(i int) int { return spareSlotsOffset + i*spareSlotLength }
