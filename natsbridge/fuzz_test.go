package natsbridge

import (
	"encoding/binary"
	"errors"
	"testing"
)

// FuzzReader feeds arbitrary payloads to the decoder: it never panics or
// hangs, rejects with ErrForeign, ErrVersion or ErrMalformed only, and a frame it
// accepts re-encodes to the same bytes (so nothing is read that was not
// written as a frame).
func FuzzReader(f *testing.F) {
	b, _ := newBatch(4096)
	_ = b.Append(1, []byte("a"))
	_ = b.Append(9, []byte("x"), []byte(""), []byte("yz"))
	good := append([]byte(nil), b.Seal(7, 3, 9)...)
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add(good[:headerLength])
	f.Add([]byte{})
	f.Add([]byte("PUB foo 5\r\nhello\r\n"))
	bad := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(bad[offCount:], 1<<31)
	f.Add(bad)
	bad = append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(bad[headerLength+4:], maxParts+1)
	f.Add(bad)
	bad = append([]byte(nil), good...)
	bad[offVersion] = 1
	f.Add(bad)
	bad = append([]byte(nil), good...)
	binary.LittleEndian.PutUint64(bad[offFirst:], 2) // below the batch sequence
	f.Add(bad)

	var r Reader
	enc, _ := newBatch(1 << 20)
	f.Fuzz(func(t *testing.T, frame []byte) {
		h, err := r.Reset(frame)
		if err != nil {
			if !errors.Is(err, ErrForeign) && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrVersion) {
				t.Fatalf("unexpected error %v", err)
			}
			if r.Next() {
				t.Fatal("a rejected frame yields a message")
			}
			return
		}
		enc.Reset()
		n := 0
		for r.Next() {
			n++
			if err := enc.Append(r.TypeID(), r.Parts()...); err != nil {
				t.Fatalf("re-encode: %v", err)
			}
		}
		if n != h.Count {
			t.Fatalf("read %d messages of %d", n, h.Count)
		}
		if got := enc.Seal(h.Source, h.Sequence, h.First); string(got) != string(frame) {
			t.Fatalf("re-encoded frame differs")
		}
	})
}
