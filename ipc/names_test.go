package ipc

import "github.com/dutyrt/duty/internal/ipcfile"

// The layout's names as the tests have always read them: internal/ipcfile
// holds the layout, and these tests check it against the files ipc writes.
const (
	fileMagic              = ipcfile.Magic
	fileLayoutVersion      = ipcfile.LayoutVersion
	headerLength           = ipcfile.HeaderLength
	sectionAlignment       = ipcfile.SectionAlignment
	maxSections            = ipcfile.MaxSections
	magicOffset            = ipcfile.MagicOffset
	versionOffset          = ipcfile.VersionOffset
	kindOffset             = ipcfile.KindOffset
	headerLengthOffset     = ipcfile.HeaderLengthOffset
	sectionCountOffset     = ipcfile.SectionCountOffset
	sectionAlignmentOffset = ipcfile.SectionAlignmentOffset
	fileLengthOffset       = ipcfile.FileLengthOffset
	ownerPIDOffset         = ipcfile.OwnerPIDOffset
	ownerStartTimeOffset   = ipcfile.OwnerStartTimeOffset
	createdOffset          = ipcfile.CreatedOffset
	livenessTimeoutOffset  = ipcfile.LivenessTimeoutOffset
	heartbeatOffset        = ipcfile.HeartbeatOffset
	sectionTableOffset     = ipcfile.SectionTableOffset
	sectionEntryLength     = ipcfile.SectionEntryLength
	sectionOffsetField     = ipcfile.SectionOffsetField
	sectionLengthField     = ipcfile.SectionLengthField
	spareSlotsOffset       = ipcfile.SpareSlotsOffset
	spareSlotLength        = ipcfile.SpareSlotLength
	spareSlotCount         = ipcfile.SpareSlotCount
	heartbeatClosed        = ipcfile.HeartbeatClosed
	maxFileLength          = ipcfile.MaxFileLength
	maxLivenessMillis      = ipcfile.MaxLivenessMillis

	mailboxLayoutVersion         = ipcfile.MailboxLayoutVersion
	mailboxHeaderSlot            = ipcfile.MailboxHeaderSlot
	mailboxWordsSlot             = ipcfile.MailboxWordsSlot
	mailboxVersionOffset         = ipcfile.MailboxVersionOffset
	mailboxMaxMessageSizeOffset  = ipcfile.MailboxMaxMessageSizeOffset
	mailboxMaxPartsOffset        = ipcfile.MailboxMaxPartsOffset
	mailboxConsumerTimeoutOffset = ipcfile.MailboxConsumerTimeoutOffset
	mailboxUnblockTimeoutOffset  = ipcfile.MailboxUnblockTimeoutOffset
	mailboxFlagsOffset           = ipcfile.MailboxFlagsOffset
	mailboxFlagChecksum          = ipcfile.MailboxFlagChecksum
	maxMailboxParts              = ipcfile.MaxMailboxParts
	maxMailboxTimeoutMs          = ipcfile.MaxMailboxTimeoutMs
)

type versionError = ipcfile.VersionError

var (
	alignUp      = ipcfile.AlignUp
	sectionEntry = ipcfile.SectionEntry
	spareSlot    = ipcfile.SpareSlot
	writeHeader  = ipcfile.Write
	magicWord    = ipcfile.MagicWord
)

// layout is ipcfile.Layout for a Kind.
func layout(kind Kind, sections []int) (ipcfile.Header, error) {
	return ipcfile.Layout(int32(kind), sections)
}
