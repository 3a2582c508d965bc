package mailboxframe

import (
	"encoding/binary"

	"github.com/dutyrt/duty/internal/mailboxdef"
	"github.com/dutyrt/duty/internal/record"
)

// Messages counts the messages in the records of log between the ring
// positions head and tail, whose payloads start over bytes before their
// body or frame header (Layout.Over): plain records, and framed records
// that start a message (index 0). Padding and open claims are stepped
// over; a header that no correct sender writes (the ring is shared
// memory) ends the count there, and a stretch that is misaligned or
// longer than the ring counts 0. Each header is an atomic load (the
// length that publishes a record comes first in it), and a framed
// record's index is read only behind its published length.
func Messages(log *record.Log, head, tail int64, over int) int64 {
	capacity := log.Capacity()
	if head&(record.Alignment-1) != 0 || tail-head > int64(capacity) {
		return 0
	}
	var n int64
	for pos := head; pos < tail; {
		index := int(pos) & (capacity - 1)
		w := log.WordAt(index).Load()
		length, typeID := int32(w), int32(w>>32)
		switch {
		case length > 0:
			if !record.Check(index, capacity, length, typeID) {
				return n
			}
			if typeID != record.PaddingTypeID {
				at := over + mailboxdef.IndexOffset
				if typeID&record.FlagFramed == 0 {
					n++
				} else if int(length)-record.HeaderLength >= at+4 &&
					binary.LittleEndian.Uint32(log.Payload(index, at+4)[at:]) == 0 {
					n++
				}
			}
			pos += int64(record.Align(int(length)))
		case length < 0:
			if !record.CheckClaim(index, capacity, length) {
				return n
			}
			pos += (-int64(length) + record.Alignment - 1) &^ (record.Alignment - 1)
		default:
			return n
		}
	}
	return n
}
