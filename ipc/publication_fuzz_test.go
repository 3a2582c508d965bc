package ipc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/ringbuf"
)

// FuzzSubscriptionReader runs the subscriber's reader over arbitrary log
// bytes from an arbitrary aligned position, with Poll and with
// ControlledPoll (actions from the input): it returns messages or
// ErrLogCorrupt and never panics, hangs, reads outside the log or crosses
// its end in one read; every message has a valid type and at most the max
// message length, and the position only moves forward.
func FuzzSubscriptionReader(f *testing.F) {
	f.Add(validLog(f, 1024, 128), uint16(0), []byte{4})
	f.Add(validLog(f, 1024, 32), uint16(40), []byte{1, 2, 3, 4})
	f.Add([]byte{16, 0, 0, 0, 5, 0, 0, 0x60}, uint16(0), []byte(nil))
	f.Add([]byte{0xf0, 0xff, 0xff, 0x7f, 1, 0, 0, 0}, uint16(8), []byte{3})
	f.Add([]byte("0\x03\x00\x000"), uint16(0), []byte(""))
	f.Fuzz(func(t *testing.T, data []byte, start uint16, actions []byte) {
		const capacity, maxMessage = 1024, 300
		log := atomicbuf.Make(capacity).Bytes()
		copy(log, data)
		var word atomic.Int64
		pos := int64(start) &^ 7
		r := newLogReader(log, 128, maxMessage, &word, pos, unlimitedTail(), anUnblock())
		check := func(typeID int32, p []byte) {
			if typeID < 1 || typeID > MaxTypeID || len(p) > maxMessage {
				t.Fatalf("delivered type %d, %d bytes", typeID, len(p))
			}
		}
		for i := 0; i < 8; i++ {
			before := r.pos
			var err error
			if i%2 == 0 {
				_, err = r.read(func(typeID int32, p []byte) { check(typeID, p) }, nil, 1+i)
			} else {
				k := 0
				_, err = r.read(nil, func(typeID int32, p []byte) ringbuf.Action {
					check(typeID, p)
					a := ringbuf.Continue
					if k < len(actions) {
						a = ringbuf.Action(actions[k]%5) + ringbuf.Abort - 1
					}
					k++
					return a
				}, 16)
			}
			if err != nil && !errors.Is(err, ErrLogCorrupt) {
				t.Fatalf("untyped error %v", err)
			}
			if r.pos < before || r.pos-before > int64(capacity-int(before&int64(capacity-1))) {
				t.Fatalf("position %d -> %d", before, r.pos)
			}
			if r.pos != word.Load() && r.pos != before {
				t.Fatalf("position %d not published (%d)", r.pos, word.Load())
			}
			if err != nil || r.pos == before {
				return
			}
		}
	})
}

// FuzzReassembler encodes messages of fuzzed sizes into a log the way
// Publication.Offer does (fragments of at most mtu-8 payload bytes), then
// pads out (loses) fuzzed records, and reads it all. Without further
// damage the subscriber must deliver exactly the messages none of whose
// records was lost, intact and in order, and count a drop for each damaged
// one; it never delivers a partial message. With fuzzed header words on
// top, it must still never panic or hang.
func FuzzReassembler(f *testing.F) {
	f.Add([]byte{10, 200, 3, 90}, []byte{}, []byte{})
	f.Add([]byte{250, 250, 1}, []byte{1}, []byte{})
	f.Add([]byte{255, 2, 255, 40}, []byte{0, 4}, []byte{})
	f.Add([]byte{255, 255}, []byte{}, []byte{3, 0, 0, 0, 0})
	f.Add([]byte{1, 255}, []byte{0}, []byte{})
	f.Add([]byte("0"), []byte("01"), []byte("0"))
	f.Add([]byte("\xb9\xf7\x15\xf3\xc2\f\x19G \xb1s\xc1"), []byte("0"), []byte(""))
	f.Fuzz(func(t *testing.T, sizes, lose, damage []byte) {
		const capacity, mtu, maxMessage = 4096, 72, 600
		log := atomicbuf.Make(capacity).Bytes()
		type rec struct {
			at, msg int
		}
		var msgs [][]byte
		var recs []rec
		at := 0
		for i, s := range sizes {
			n := int(s) * maxMessage / 255
			if at+claimSize(n, mtu-8) > capacity {
				break
			}
			m := make([]byte, n)
			for j := range m {
				m[j] = byte(i*7 + j)
			}
			msgs = append(msgs, m)
			for _, r := range encodeMessage(log, at, int32(1+i%3), m, mtu-8) {
				recs = append(recs, rec{r, len(msgs) - 1})
			}
			at += claimSize(n, mtu-8)
		}
		lost := map[int]bool{}
		records, lostRecords := map[int]int{}, map[int]map[int]bool{}
		for _, r := range recs {
			records[r.msg]++
		}
		for _, l := range lose {
			if len(recs) == 0 {
				break
			}
			r := recs[int(l)%len(recs)]
			lost[r.msg] = true
			if lostRecords[r.msg] == nil {
				lostRecords[r.msg] = map[int]bool{}
			}
			lostRecords[r.msg][r.at] = true
			binary.LittleEndian.PutUint32(log[r.at+4:], uint32(0xffffffff)) // padding: the record is lost
		}
		for i := 0; i+4 < len(damage); i += 5 {
			off := int(binary.LittleEndian.Uint16(damage[i:])) % (capacity / 8) * 8
			binary.LittleEndian.PutUint32(log[off+int(damage[i+2]%2)*4:], uint32(damage[i+3])|uint32(damage[i+4])<<24)
		}
		var word atomic.Int64
		r := newLogReader(log, mtu, maxMessage, &word, 0, unlimitedTail(), anUnblock())
		var got [][]byte
		for r.pos < int64(at) { // not past what was written: the next lap is this one again
			before := r.pos
			_, err := r.read(func(typeID int32, p []byte) { got = append(got, bytes.Clone(p)) }, nil, ringbuf.NoLimit)
			if err != nil {
				require.ErrorIs(t, err, ErrLogCorrupt)
				require.NotEmpty(t, damage, "only damaged headers are corrupt")
				return
			}
			if r.pos == before {
				break
			}
		}
		if len(damage) >= 5 {
			return // damaged headers can describe other messages: no claim on content
		}
		var want [][]byte
		for i, m := range msgs {
			if !lost[i] {
				want = append(want, m)
			}
		}
		require.Equal(t, len(want), len(got))
		for i := range want {
			require.True(t, bytes.Equal(want[i], got[i]), "message %d", i)
		}
		// A message whose records are all lost is padding: nothing to
		// detect. One that lost some of its fragments is damaged.
		damaged := 0
		for i, l := range lostRecords {
			if len(l) < records[i] {
				damaged++
			}
		}
		require.GreaterOrEqual(t, r.dropped, int64(damaged), "every damaged fragmented message counted")
		require.Equal(t, int64(at), r.pos, "everything consumed")
	})
}

// encodeMessage writes m at index as Publication.offerFragmented (or a
// plain record) would once committed, and returns its records' indexes.
// It is written from the layout, independently of the publisher's code.
func encodeMessage(log []byte, index int, typeID int32, m []byte, maxPayload int) []int {
	le := binary.LittleEndian
	put := func(at int, length int, t int32, p []byte) {
		le.PutUint32(log[at:], uint32(length))
		le.PutUint32(log[at+4:], uint32(t))
		copy(log[at+8:], p)
	}
	if len(m) <= maxPayload {
		put(index, len(m)+8, typeID, m)
		return []int{index}
	}
	var recs []int
	for off := 0; off < len(m); off += maxPayload {
		chunk := m[off:min(off+maxPayload, len(m))]
		t := typeID | FragmentFlag
		if off == 0 {
			t |= BeginFlag
		}
		if off+len(chunk) == len(m) {
			t |= EndFlag
		}
		put(index, len(chunk)+8, t, chunk)
		recs = append(recs, index)
		index += recordSize(len(chunk))
	}
	return recs
}

// validLog returns the log of a publication after a few offers.
func validLog(f *testing.F, capacity, mtu int) []byte {
	log := make([]byte, capacity)
	at := 0
	for i, n := range []int{5, 100, 0, 31, 200} {
		m := bytes.Repeat([]byte{byte(i)}, n)
		if at+claimSize(n, mtu-8) > capacity {
			break
		}
		encodeMessage(log, at, int32(i+1), m, mtu-8)
		at += claimSize(n, mtu-8)
	}
	return log
}
