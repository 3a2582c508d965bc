package publication

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty"
	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/internal/record"
	"github.com/dutyrt/duty/ringbuf"
)

// FuzzSubscriptionReader runs the subscriber's reader over arbitrary log
// bytes from an arbitrary aligned position, with Poll and with
// ControlledPoll (actions from the input), under a tail word from the
// input (ahead of or behind that position, with or without the sealed bit
// and other high bits), and with or without an unblock in the
// publication's past (which makes the reader check the tail). A poll returns messages or ErrCorrupt (matching
// duty.ErrCorrupt too), and never panics, hangs, reads outside the log or
// crosses its end in one read; every message has a valid type and at most
// the max message length, and the position only moves forward. A poll that
// reads nothing is judged as Poll judges it before it waits there
// (stalled): nil exactly where a correct publisher can leave a subscriber
// waiting (possibleWait, written from the layout: a tail a publisher
// stores, and at the position nothing claimed, a claim whose marker is not
// written yet, or an open claim within bounds), and ErrCorrupt
// everywhere else, so that no hostile header or tail makes Poll return
// (0, nil) for good. Every error names the record where the reader
// stopped (its position and log index), or the tail word.
func FuzzSubscriptionReader(f *testing.F) {
	f.Add(validLog(f, 1024, 128), uint16(0), []byte{4}, int32(1024), uint8(0), true)
	f.Add(validLog(f, 1024, 32), uint16(40), []byte{1, 2, 3, 4}, int32(512), uint8(0), false)
	f.Add([]byte{16, 0, 0, 0, 5, 0, 0, 0x60}, uint16(0), []byte(nil), int32(64), uint8(0), true)
	f.Add([]byte{0xf0, 0xff, 0xff, 0x7f, 1, 0, 0, 0}, uint16(8), []byte{3}, int32(64), uint8(0), true)
	f.Add([]byte("0\x03\x00\x000"), uint16(0), []byte(""), int32(64), uint8(0), true)
	f.Add([]byte("0\x00\x00\x00\x00\x00\x00p"), uint16(0), []byte(""), int32(256), uint8(0), true) // a fragment of type 0
	f.Add([]byte{16, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 7, 0, 0, 0},
		uint16(0), []byte(nil), int32(1024), uint8(0), true) // a bad record after padding, in one read
	// Tail words, possible and impossible ones, from position 16 with one
	// record behind it.
	for _, w := range []struct {
		ahead int32
		high  uint8 // bits 56 to 63 of the word
	}{
		{0, 0}, {0, 0x40}, {64, 0}, {64, 0x40}, {1024, 0}, // at or ahead of the position; sealed or not
		{-8, 0}, {-8, 0x40}, {4, 0}, {1024 + 8, 0}, {0, 0x80}, {0, 0x20}, {0, 0x01},
	} {
		f.Add(validLog(f, 1024, 128)[:16], uint16(16), []byte(nil), w.ahead, w.high, true)
	}
	// Open claims, possible and impossible ones (MTU 128, max message 300).
	const frag = pubTypeID | fragmentFlag | beginFlag
	for _, m := range []struct {
		at             int
		length, typeID int32
		ahead          int32
	}{
		{0, -8, pubTypeID, 64},                 // an empty message
		{0, -128, pubTypeID, 128},              // a record of the MTU
		{0, -144, frag, 144},                   // the smallest fragmented message
		{0, -320, frag, 512},                   // the largest
		{1016, -8, record.PaddingTypeID, 16},   // padding to the end of the log
		{0, 0, 0, 16},                          // claimed, nothing written yet
		{0, -4, pubTypeID, 64},                 // shorter than a header
		{0, -136, pubTypeID, 256},              // beyond the MTU
		{0, -136, frag, 256},                   // no fragmented claim's size
		{0, -16, pubTypeID, 8},                 // beyond the tail
		{992, -64, pubTypeID, 64},              // beyond the end of the log
		{0, -16, record.PaddingTypeID, 64},     // padding short of the end
		{0, 0, pubTypeID, 64},                  // a type without a length
		{0, math.MinInt32, pubTypeID, 1 << 20}, // the most negative
		{0, -16, pubTypeID | fragmentFlag, 64}, // a fragment without BEGIN
		{0, -144, frag | endFlag, 256},         // a first fragment with END
	} {
		log := make([]byte, 1024)
		binary.LittleEndian.PutUint64(log[m.at:], uint64(record.HeaderWord(int(m.length), m.typeID)))
		f.Add(log, uint16(m.at), []byte(nil), m.ahead, uint8(0), false)
	}
	const capacity, mtu, maxMessage = 1024, 128, 300
	fragmentClaims := fragmentClaimSizes(mtu, maxMessage)
	f.Fuzz(func(t *testing.T, data []byte, start uint16, actions []byte, ahead int32, high uint8, unblocked bool) {
		log := atomicbuf.Make(capacity).Bytes()
		copy(log, data)
		var word atomic.Int64
		pos := int64(start) &^ 7
		tail, unblocks := new(atomic.Int64), new(atomic.Int64)
		tail.Store((pos + int64(ahead)) ^ int64(high)<<56)
		if unblocked {
			unblocks.Store(1)
		}
		r := newLogReader(log, mtu, maxMessage, &word, pos, tail, unblocks)
		check := func(typeID int32, p []byte) {
			if typeID < 1 || typeID > maxTypeID || len(p) > maxMessage {
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
			if err != nil && (!errors.Is(err, ErrCorrupt) || !errors.Is(err, duty.ErrCorrupt)) {
				t.Fatalf("untyped error %v", err)
			}
			if r.pos < before || r.pos-before > int64(capacity-int(before&int64(capacity-1))) {
				t.Fatalf("position %d -> %d", before, r.pos)
			}
			// The reader stops at the bad record, and its error names it.
			record := func() string {
				return fmt.Sprintf("record at position %d (log index %d)", r.pos, r.pos&(capacity-1))
			}
			if err != nil && !strings.Contains(err.Error(), record()) {
				t.Fatalf("stopped at position %d: %v", r.pos, err)
			}
			if r.pos != word.Load() && r.pos != before {
				t.Fatalf("position %d not published (%d)", r.pos, word.Load())
			}
			if err == nil && r.pos == before {
				// Poll would wait here.
				serr := r.stalled(tail.Load())
				if possible := possibleWait(log, r.pos, tail.Load(), mtu, maxMessage, fragmentClaims); (serr == nil) != possible {
					t.Fatalf("at position %d, tail %#x, header %#x: a correct publisher can leave this: %v; stalled: %v",
						r.pos, tail.Load(), binary.LittleEndian.Uint64(log[r.pos&(capacity-1):]), possible, serr)
				}
				if serr != nil && (!errors.Is(serr, ErrCorrupt) || !errors.Is(serr, duty.ErrCorrupt)) {
					t.Fatalf("untyped error %v", serr)
				}
				if serr != nil && !strings.Contains(serr.Error(), record()) && !strings.Contains(serr.Error(), fmt.Sprintf("tail word %#x", tail.Load())) {
					t.Fatalf("at position %d: %v names neither the record there nor the tail", r.pos, serr)
				}
			}
			if err != nil || r.pos == before {
				return
			}
		}
	})
}

// possibleWait reports whether a correct publisher can leave a subscriber
// at position pos, under the tail word tailWord, with nothing it can read
// there yet. Written from the layout (docs/publication.md), not from the reader:
// the tail is 8-aligned, at most the max position (2^62 - 4 * capacity),
// with no bit above it but the sealed bit (62), at or ahead of the
// position and at most a lap ahead. At the tail nothing is claimed; below
// it the header at the position is zero (claimed, not written yet),
// committed (the reader's to deliver or report, or, past the tail, late
// bytes of an unblocked claim), or the marker of an open claim: a message
// of one record, the whole claim of a fragmented message (fragmentClaims)
// or padding to the end of the log, each ending at or before the end of
// the log and the tail.
func possibleWait(log []byte, pos, tailWord int64, mtu, maxMessage int, fragmentClaims map[int64]bool) bool {
	capacity := int64(len(log))
	tail := tailWord &^ (1 << 62)
	if tailWord < 0 || tail%8 != 0 || tail > 1<<62-4*capacity || tail < pos || tail-pos > capacity {
		return false
	}
	if pos == tail {
		return true
	}
	index := pos % capacity
	length := int32(binary.LittleEndian.Uint32(log[index:]))
	typeID := int32(binary.LittleEndian.Uint32(log[index+4:]))
	switch {
	case length > 0:
		return true
	case length == 0:
		return typeID == 0
	}
	n := -int64(length)
	if end := (n + 7) / 8 * 8; index+end > capacity || pos+end > tail {
		return false
	}
	switch {
	case typeID == -1:
		return index+n == capacity
	case typeID >= 1 && typeID < 1<<24:
		return n >= 8 && n <= int64(min(mtu, maxMessage+8))
	case typeID&^(1<<24-1) == 1<<30|1<<29 && typeID&(1<<24-1) != 0:
		return fragmentClaims[n]
	}
	return false
}

// fragmentClaimSizes returns the sizes of the claims of every fragmented
// message up to maxMessage bytes: fragments of mtu-8 payload bytes and a
// remainder, each a header and its payload rounded up to 8 bytes.
func fragmentClaimSizes(mtu, maxMessage int) map[int64]bool {
	sizes := map[int64]bool{}
	for m := mtu - 8 + 1; m <= maxMessage; m++ {
		size := 0
		for off := 0; off < m; off += mtu - 8 {
			size += (min(mtu-8, m-off) + 8 + 7) / 8 * 8
		}
		sizes[int64(size)] = true
	}
	return sizes
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
				require.ErrorIs(t, err, ErrCorrupt)
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
		t := typeID | fragmentFlag
		if off == 0 {
			t |= beginFlag
		}
		if off+len(chunk) == len(m) {
			t |= endFlag
		}
		put(index, len(chunk)+8, t, chunk)
		recs = append(recs, index)
		index += record.Size(len(chunk))
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
