package journalfile

import (
	"encoding/binary"
	"testing"
	"unsafe"
)

// RecordAt agrees with DecodeSlot without a CRC check on any bytes: ok
// exactly where DecodeSlot finds a valid record, with the same header,
// and it never reads past the room it is given (the fuzzer's slice ends
// there).
func FuzzRecordAt(f *testing.F) {
	rec := make([]byte, RecordHeaderLength+8)
	le := binary.LittleEndian
	le.PutUint32(rec[LengthOffset:], uint32(len(rec)))
	le.PutUint32(rec[MagicOffset:], RecordMagic)
	le.PutUint64(rec[SequenceOffset:], 3)
	f.Add(rec)
	f.Add(rec[:RecordHeaderLength])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 {
			return
		}
		b = b[:len(b)&^(RecordAlignment-1)] // slots are aligned, and so is a segment's end
		want, _, kind, err := DecodeSlot(b, false)
		var p unsafe.Pointer
		if len(b) > 0 {
			p = unsafe.Pointer(&b[0])
		}
		got, ok := RecordAt(p, int64(len(b)))
		if ok != (err == nil && kind == SlotRecord) || (ok && got != want) {
			t.Fatalf("RecordAt %+v %v, DecodeSlot %+v kind %d err %v", got, ok, want, kind, err)
		}
	})
}
