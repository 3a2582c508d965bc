package record

// Check is the validation of a committed record (length > 0) found at
// index in a log of capacity bytes, which every reader makes before it
// uses the record, because the log may be shared with a faulty process:
// the length covers at least the header, the record (aligned) ends at or
// before the end of the log, and the type is a message type (>= 1) or
// padding. It returns the record's aligned length, the distance to the
// next record. index must be 8-aligned and below capacity (a masked
// position); the caller checks the type's other rules (its flags, a
// maximum length), as its layer defines them. Small enough to inline.
func Check(index, capacity int, length, typeID int32) (aligned int, ok bool) {
	aligned, ok = fits(index, capacity, int64(length))
	return aligned, ok && (typeID >= 1 || typeID == PaddingTypeID)
}

// CheckClaim is Check for an open claim: marker is the length word of a
// claim marker (the negated length of the claim, which covers a record or
// a whole batch), and it reports whether a claim of that length at index
// is one a correct producer makes: at least a header, ending at or before
// the end of the log. The type is not checked: a batch's marker has none
// until its first record is appended. It returns the claim's aligned
// length. math.MinInt32, whose negation overflows 32 bits, is rejected.
func CheckClaim(index, capacity int, marker int32) (aligned int, ok bool) {
	return fits(index, capacity, -int64(marker))
}

// fits is the bound both checks share: a record of length bytes (in 64
// bits, so that a negated math.MinInt32 stays positive) at index.
func fits(index, capacity int, length int64) (int, bool) {
	aligned := (length + Alignment - 1) &^ (Alignment - 1)
	return int(aligned), length >= HeaderLength && aligned <= int64(capacity-index)
}
