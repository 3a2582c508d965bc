package record

// Check is the validation of a committed record (length > 0) found at
// index in a log of capacity bytes, which every reader makes before it
// uses the record, because the log may be shared with a faulty process:
// the length covers at least the header, the record (aligned) ends at or
// before the end of the log, and the type is a message type (>= 1) or
// padding. The record's aligned length, the distance to the next record,
// is then Align(int(length)). index must be 8-aligned and below capacity
// (a masked position); the caller checks the type's other rules (its
// flags, a maximum length), as its layer defines them.
func Check(index, capacity int, length, typeID int32) bool {
	return int(length) >= HeaderLength && Align(int(length)) <= capacity-index &&
		(typeID >= 1 || typeID == PaddingTypeID)
}

// CheckClaim is Check for an open claim: marker is the length word of a
// claim marker (the negated length of the claim, which covers a record or
// a whole batch), and it reports whether a claim of that length at index
// is one a correct producer makes: at least a header, ending at or before
// the end of the log. The type is not checked: a batch's marker has none
// until its first record is appended. The length is negated in 64 bits:
// math.MinInt32, whose negation overflows 32 bits, is rejected.
func CheckClaim(index, capacity int, marker int32) bool {
	n := -int64(marker)
	return n >= HeaderLength && (n+Alignment-1)&^(Alignment-1) <= int64(capacity-index)
}
