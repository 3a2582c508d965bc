package record

// Resync is the consumer's way past damage at its head: a record there
// that fails Check (or a claim marker that fails CheckClaim), which no
// correct producer writes, but which the late stores of a producer stalled
// past an unblock leave behind, once the space of its released claim has
// been claimed again. Agrona stops for good at such a record; a mailbox
// whose senders live on must not.
//
// Resync skips from head to the first position, up to limit, from which
// the records chain to limit exactly, each one a committed record that
// passes Check or an open claim that passes CheckClaim: it zeroes the
// bytes before it (in a ring whose consumer zeroes) and releases them, as
// a read releases what it consumed, and returns how many bytes it skipped
// (limit - head at most, when nothing chains). limit must be a position no
// claim in flight precedes: a tail loaded at least a producer liveness
// timeout ago, past which a claim before it is dead or done (the rule
// Unblock relies on), so that a zero header before limit is damage or a
// dead claim, never a producer about to mark its claim. Records before
// limit that no chain reaches are lost: the caller counts the bytes.
// Consumer only, outside any read.
//
// A position inside the damage whose bytes happen to chain to limit would
// be taken for a record boundary: the records between it and limit are
// then as trustworthy as the damage is, which is why a mailbox that must
// never deliver damaged bytes checksums its records (each sealed with its
// position), so that such records are dropped, counted, and never
// delivered. Its cost is a walk of the queued records per candidate
// position: paid only on damage.
func (r *Reader) Resync(limit int64) int64 {
	head := r.head.Load()
	if head&(Alignment-1) != 0 || limit&(Alignment-1) != 0 || limit-head <= 0 || limit-head > int64(r.capacity) {
		return 0
	}
	cand := head + Alignment
	for cand < limit && !r.chainsTo(cand, limit) {
		cand += Alignment
	}
	r.skip(head, cand)
	return cand - head
}

// chainsTo reports whether the headers from position from chain to limit
// exactly.
func (r *Reader) chainsTo(from, limit int64) bool {
	for pos := from; pos < limit; {
		index := int(pos & r.mask)
		w := r.WordAt(index).Load()
		length, typeID := int32(w), int32(w>>32)
		switch {
		case length > 0:
			if !Check(index, r.capacity, length, typeID) {
				return false
			}
			pos += int64(Align(int(length)))
		case length < 0:
			if !CheckClaim(index, r.capacity, length) {
				return false
			}
			pos += (-int64(length) + Alignment - 1) &^ (Alignment - 1)
		default:
			return false // damage, or a dead claim never marked: see Resync
		}
		if pos > limit {
			return false
		}
	}
	return true
}

// skip releases the bytes from head to to, which may cross the end of the
// ring (release never does: it is called for each side).
func (r *Reader) skip(head, to int64) {
	if end := head | r.mask; to > end+1 {
		r.release(head, end+1)
		head = end + 1
	}
	r.release(head, to)
	r.consumed = to
}
