package record

// The type id of a record, above the padding id -1, is a user type id in
// the low 24 bits with flags above it, one scheme for every layer that
// carries messages longer than one record:
//
//	bit 31      sign: negative ids are not messages (padding is -1)
//	bit 30      FlagFramed: the record is part of a framed message (a
//	            mailbox's framed records, a publication's fragments)
//	bit 29      FlagBegin: the first fragment of a message (publication)
//	bit 28      FlagEnd: the last fragment of a message (publication)
//	bit 27      FlagChecked: the payload starts with a checksum of the
//	            record (a mailbox with Config.Checksum)
//	bits 24-26  reserved: zero in every record a correct producer writes
//	bits 0-23   the user's type id, 1..MaxTypeID
//
// A record with no flag is a plain message whose type id is the user's.
// What the flags mean beyond that is the layer's: docs/mailbox.md
// ("Framing") and docs/publication.md ("Layout").
const (
	// MaxTypeID is the largest user type id.
	MaxTypeID int32 = 1<<24 - 1
	// FlagFramed marks a record that is part of a message longer than
	// one record, or of a multipart message.
	FlagFramed int32 = 1 << 30
	// FlagBegin marks the first fragment of a fragmented message.
	FlagBegin int32 = 1 << 29
	// FlagEnd marks the last fragment of a fragmented message.
	FlagEnd int32 = 1 << 28
	// FlagChecked marks a record whose payload starts with a checksum of
	// the record (its position, length, type and the rest of its payload).
	FlagChecked int32 = 1 << 27
	// FlagsReserved are the bits between the user type id and the flags.
	FlagsReserved int32 = FlagChecked - 1 - MaxTypeID
	// FlagBits are all bits of a message's type id above the user's: the
	// flags and the reserved bits.
	FlagBits int32 = FlagFramed | FlagBegin | FlagEnd | FlagChecked | FlagsReserved
)
