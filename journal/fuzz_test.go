package journal

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/dutyrt/duty/internal/journalfile"
)

// FuzzRecover writes arbitrary bytes after a valid segment header and
// opens the journal in each recovery mode. Whatever the bytes, there is no
// panic; recovery either fails with a corruption or version error or
// leaves a log that reads to its end without error, and appending then
// works: the appended record reads back after the others.
func FuzzRecover(f *testing.F) {
	rec := func(stream uint32, seq int64, body string) []byte {
		b := make([]byte, journalfile.Align(int64(journalfile.RecordHeaderLength+len(body))))
		le := binary.LittleEndian
		le.PutUint32(b[journalfile.MagicOffset:], journalfile.RecordMagic)
		le.PutUint32(b[journalfile.StreamOffset:], stream)
		le.PutUint64(b[journalfile.SequenceOffset:], uint64(seq))
		copy(b[journalfile.RecordHeaderLength:], body)
		n := journalfile.RecordHeaderLength + len(body)
		le.PutUint32(b[journalfile.CrcOffset:], journalfile.RecordCRC(b[:n]))
		le.PutUint32(b[journalfile.LengthOffset:], uint32(n))
		return b
	}
	cat := func(bs ...[]byte) []byte {
		var out []byte
		for _, b := range bs {
			out = append(out, b...)
		}
		return out
	}
	good := cat(rec(1, 0, "a"), rec(1, 1, "bb"), rec(2, 0, "ccc"))
	f.Add(good)
	f.Add([]byte{})
	torn := cat(rec(1, 0, "a"), rec(1, 1, "bb"))
	torn[len(torn)-2] ^= 1
	f.Add(torn)
	mid := cat(rec(1, 0, "a"), rec(1, 1, "bb"), rec(1, 2, "c"))
	mid[journalfile.RecordHeaderLength] ^= 1
	f.Add(mid)
	f.Add(cat(rec(1, 0, "a"), []byte{8, 0, 0, 0, 0x01, 0x44, 0x50, 0x4A}, rec(1, 1, "b"))) // padding
	f.Add(cat(rec(1, 0, "a"), []byte{0xff, 0xff, 0xff, 0x7f, 0x01, 0x44, 0x52, 0x4A}))     // huge length
	f.Add(cat([]byte{48, 0, 0, 0, 0x02, 0x44, 0x52, 0x4A}, make([]byte, 40)))              // version 2
	f.Add(cat(rec(1, 0, "a"), []byte{0, 0, 0, 0, 1, 2, 3, 4}, rec(1, 1, "b")))             // hole
	f.Fuzz(fuzzOne)
}

func fuzzOne(t *testing.T, data []byte) {
	if len(data) > MinSegmentSize-journalfile.SegmentHeaderLength {
		data = data[:MinSegmentSize-journalfile.SegmentHeaderLength]
	}
	for _, mode := range []RecoveryMode{RecoverStrict, RecoverSkip, RecoverTruncate} {
		dir := fastDir(t)
		s, err := journalfile.CreateSegment(dir, 0, MinSegmentSize, 1)
		if err != nil {
			t.Fatal(err)
		}
		copy(s.Data[journalfile.SegmentHeaderLength:], data)
		if err := s.Release(); err != nil {
			t.Fatal(err)
		}
		j, err := Open(dir, Options{SegmentSize: MinSegmentSize, Recovery: mode, Logger: quiet})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
				t.Fatalf("mode %d: %v", mode, err)
			}
			if mode != RecoverStrict && !errors.Is(err, ErrVersion) {
				t.Fatalf("mode %d did not recover: %v", mode, err)
			}
			continue
		}
		tl, _ := j.NewTailer()
		n := 0
		for {
			_, ok, err := tl.Next()
			if err != nil {
				t.Fatalf("mode %d: recovered log does not read: %v", mode, err)
			}
			if !ok {
				break
			}
			n++
		}
		if _, _, err := j.Append(9, 9, []byte("after")); err != nil {
			t.Fatal(err)
		}
		r, ok, err := tl.Next()
		if err != nil || !ok || string(r.Body) != "after" {
			t.Fatalf("mode %d: appended record: %v %v %q", mode, ok, err, r.Body)
		}
		_ = tl.Close()
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// FuzzDecodeSlot runs the record decoder every reader uses over arbitrary
// bytes: no panic, and what it accepts is a record whose fields and CRC
// agree with the bytes.
func FuzzDecodeSlot(f *testing.F) {
	b := make([]byte, 64)
	le := binary.LittleEndian
	le.PutUint32(b[journalfile.MagicOffset:], journalfile.RecordMagic)
	le.PutUint32(b[journalfile.LengthOffset:], 45)
	le.PutUint32(b[journalfile.CrcOffset:], journalfile.RecordCRC(b[:45]))
	f.Add(b, true)
	mp := make([]byte, 64) // a multipart record: two parts, "ab" and "c"
	le.PutUint32(mp[journalfile.MagicOffset:], journalfile.RecordMagic)
	le.PutUint32(mp[journalfile.FlagsOffset:], journalfile.RecordParts)
	body := append(le.AppendUint32(le.AppendUint32(le.AppendUint32(nil, 2), 2), 1), "abc"...)
	copy(mp[journalfile.RecordHeaderLength:], body)
	le.PutUint32(mp[journalfile.LengthOffset:], uint32(journalfile.RecordHeaderLength+len(body)))
	le.PutUint32(mp[journalfile.CrcOffset:], journalfile.RecordCRC(mp[:journalfile.RecordHeaderLength+len(body)]))
	f.Add(mp, true)
	f.Add([]byte{16, 0, 0, 0, 0x01, 0x4F, 0x45, 0x4A}, true)
	f.Add([]byte{8, 0, 0, 0, 0x01, 0x44, 0x50, 0x4A}, false)
	f.Add([]byte{0, 0, 0, 0, 1}, true)
	f.Add([]byte{1, 2, 3}, true)
	f.Fuzz(func(t *testing.T, b []byte, verify bool) {
		h, body, kind, err := journalfile.DecodeSlot(b, verify)
		if err != nil {
			return
		}
		switch kind {
		case journalfile.SlotRecord:
			if int(h.Length) != journalfile.RecordHeaderLength+len(body) || journalfile.Align(int64(h.Length)) > int64(len(b)) {
				t.Fatalf("record length %d, body %d, slot %d", h.Length, len(body), len(b))
			}
			if verify && journalfile.RecordCRC(b[:h.Length]) != le.Uint32(b[journalfile.CrcOffset:]) {
				t.Fatal("accepted a bad CRC")
			}
			if h.Flags&^journalfile.KnownFlags != 0 {
				t.Fatalf("accepted unknown flags %#x", h.Flags)
			}
			r := Record{RecordHeader: h, Body: body}
			parts, err := r.Parts(nil)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("part table error %v is not ErrCorrupt", err)
				}
				break
			}
			n := 0
			for _, p := range parts {
				n += len(p)
			}
			if h.Flags&journalfile.RecordParts != 0 {
				if len(parts) < 2 || len(parts) > maxRecordParts || n+4+4*len(parts) != len(body) {
					t.Fatalf("%d parts of %d bytes in a body of %d", len(parts), n, len(body))
				}
			} else if len(parts) != 1 || n != len(body) {
				t.Fatal("a plain record's parts are not its body")
			}
		case journalfile.SlotEnd:
			if int(le.Uint32(b)) != len(b) {
				t.Fatal("end marker of the wrong length")
			}
		case journalfile.SlotPad:
			if journalfile.SlotLength(h) > int64(len(b)) || h.Length < journalfile.EndMarkerLength {
				t.Fatal("padding out of bounds")
			}
		case journalfile.SlotEmpty:
			if len(b) >= 4 && le.Uint32(b) != 0 {
				t.Fatal("non-zero length taken for empty")
			}
		}
	})
}
