package mailboxframe

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/dutyrt/duty/internal/mailboxdef"
	"github.com/dutyrt/duty/internal/record"
)

// Checksummed records (mailbox.Config.Checksum). A sender that stalls
// between its claim and its commit for longer than the unblock timeout
// finds its claim released as torn; if it then resumes, its late stores
// land in space that another sender may have claimed since, and that
// sender's message would be delivered with bytes nobody sent. No store of
// the stalled sender can be prevented, so the mailbox makes them
// detectable: every record carries a CRC32C (Castagnoli) of where it is
// and what it holds, computed by its sender just before the commit, and
// checked by the consumer before anything of the record is used. A record
// whose checksum does not match is dropped with its message and counted
// in the mailbox's Stats.Corrupt.
//
// The record's type id has record.FlagChecked set, and its payload starts
// with checksumLength bytes before the plain payload or the frame header:
//
//	+0  uint32 CRC32C of the payload after these eight bytes, started from
//	           a value that mixes the record's ring position, its length and
//	           its type id (flags included): see checksum
//	+4  uint32 reserved (0)
//	+8  the plain payload, or the frame header and fragment
//
// The position binds a record to its place in the ring: a stalled sender
// that writes a whole record of its own (checksum included) where another
// sender's now is, a lap later, is caught as well. What remains: a late
// store that lands between a sender's checksum and its commit (the same
// window as the unchecked claim's, nanoseconds against the seconds of the
// stall) goes unseen.

// checksumLength is the length of the checksum prefix of a checksummed
// record's payload.
const checksumLength = mailboxdef.ChecksumLength

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checksum is the checksum of a record at ring position pos, of the given
// length (header included) and type id, whose payload after the checksum
// prefix is body: the CRC32C of body, started from a value that mixes the
// position, the length and the type, so that a record read at another
// position (or with another length or type) than it was sealed at fails.
// Mixed into the seed, the header costs no array handed to crc32.Update,
// which would escape to the heap on every call.
func checksum(pos int64, length, typeID int32, body []byte) uint32 {
	seed := uint32(pos) ^ uint32(pos>>32)*0x9e3779b1 ^ uint32(length)*0x85ebca77 ^ uint32(typeID)*0xc2b2ae3d
	return crc32.Update(seed, castagnoli, body)
}

// Seal writes the checksum of the claimed record whose payload is payload
// (the whole payload, prefix included), of type typeID, at ring position
// pos, into its prefix.
func Seal(payload []byte, typeID int32, pos int64) {
	sum := checksum(pos, int32(len(payload)+record.HeaderLength), typeID, payload[checksumLength:])
	binary.LittleEndian.PutUint32(payload[0:], sum)
	binary.LittleEndian.PutUint32(payload[4:], 0)
}

// ClaimPosition returns the ring position of the record at index (a
// record index) in a ring of capacity bytes whose tail is tail, claimed by
// the caller a moment ago: the one position below the tail with that
// index. The claim moved the tail past it, and the consumer cannot pass an
// uncommitted claim, so the tail is at most a capacity ahead (head <=
// position < tail, tail - head <= capacity). The tail is loaded right
// after the claim, before anything is written into it: a sender that
// stalls later, long enough for its claim to be released and its space
// claimed again a lap on, seals with its own position, which the record
// now there does not have.
func ClaimPosition(tail int64, capacity, index int) int64 {
	mask := int64(capacity - 1)
	d := (tail - int64(index)) & mask
	if d == 0 {
		d = int64(capacity)
	}
	return tail - d
}

// Verify reports whether the checksummed record at ring position pos, of
// type typeID, whose payload is payload, holds what its sender sealed.
func Verify(pos int64, typeID int32, payload []byte) bool {
	if len(payload) < checksumLength {
		return false
	}
	want := binary.LittleEndian.Uint32(payload)
	return want == checksum(pos, int32(len(payload)+record.HeaderLength), typeID, payload[checksumLength:]) &&
		binary.LittleEndian.Uint32(payload[4:]) == 0
}
