package record

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// readAll reads every committed record (up to two reads: one per side of
// the end) and returns their first payload bytes.
func readAll(t *testing.T, r *testRing) ([]byte, error) {
	t.Helper()
	var got []byte
	for range 2 {
		_, err := r.rd.Read(func(_ int32, p []byte) { got = append(got, p[0]) }, 1<<30)
		if err != nil {
			return got, err
		}
	}
	return got, nil
}

// A header scribbled over at the head (a late writer's stores): reads stop
// there, Resync skips to the next record that chains to the tail, zeroed
// and released, and the records behind the damage are read.
func TestResyncSkipsADamagedHeader(t *testing.T) {
	r := newTestRing(t, 1024, true)
	for i := range 6 {
		require.True(t, r.write(t, 1, []byte{byte(i), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}))
	}
	got, err := readAll(t, r)
	require.NoError(t, err)
	require.Equal(t, []byte{0, 1, 2, 3, 4, 5}, got)
	for i := range 4 {
		require.True(t, r.write(t, 1, []byte{byte(10 + i), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}))
	}
	head := r.head.Load()
	at := int(head & r.log.mask)
	binary.LittleEndian.PutUint64(r.records[at:], 0x7fff_0000_7777) // neither a record nor a claim
	_, err = readAll(t, r)
	require.ErrorIs(t, err, ErrCorrupt)
	require.Equal(t, head, r.head.Load(), "a read stops at the damage")

	skipped := r.rd.Resync(r.tail.Load())
	require.Equal(t, int64(Size(16)), skipped, "exactly the damaged record")
	require.Zero(t, r.log.WordAt(at).Load(), "the skipped bytes are zeroed")
	got, err = readAll(t, r)
	require.NoError(t, err)
	require.Equal(t, []byte{11, 12, 13}, got)
	require.Equal(t, r.tail.Load(), r.head.Load())
}

// Damage across the end of the ring is skipped in two releases; an open
// claim on the way chains (its marker is checked), and the reads stop at
// it until it is committed.
func TestResyncAcrossTheEndPastAnOpenClaim(t *testing.T) {
	r := newTestRing(t, 256, true)
	for range 7 {
		require.True(t, r.write(t, 1, make([]byte, 24))) // 32 bytes each: 224
	}
	_, err := readAll(t, r)
	require.NoError(t, err)
	// Two records from 224: the first fits (224..256), the second wraps to 0.
	require.True(t, r.write(t, 1, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24}))
	require.True(t, r.write(t, 1, []byte{2, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24}))
	index, err := r.p.Claim(Size(8))
	require.NoError(t, err)
	r.p.Mark(index, Size(8), 1)
	binary.LittleEndian.PutUint64(r.records[224:], 0xdead_beef_dead_beef)

	require.Equal(t, int64(32), r.rd.Resync(r.tail.Load()), "to the record after the end")
	got, err := readAll(t, r)
	require.NoError(t, err)
	require.Equal(t, []byte{2}, got, "the record behind the damage; the open claim stays")
	r.log.Payload(index, 8)[0] = 3
	r.p.Publish(index, Size(8))
	got, err = readAll(t, r)
	require.NoError(t, err)
	require.Equal(t, []byte{3}, got)
	require.Equal(t, r.tail.Load(), r.head.Load())
}

// Nothing chains to the limit (everything behind the head is damage): the
// whole of it is skipped; an empty ring, or a limit behind the head, is
// left alone.
func TestResyncWithoutAChain(t *testing.T) {
	r := newTestRing(t, 256, true)
	require.Zero(t, r.rd.Resync(r.tail.Load()), "an empty ring")
	require.True(t, r.write(t, 1, make([]byte, 8)))
	require.True(t, r.write(t, 1, make([]byte, 8)))
	binary.LittleEndian.PutUint64(r.records[0:], 0x0000_0001_0000_0003) // length 3: shorter than a header
	binary.LittleEndian.PutUint64(r.records[16:], 0)                    // and a header zeroed
	require.Zero(t, r.rd.Resync(-8), "a limit behind the head")
	require.Equal(t, int64(32), r.rd.Resync(r.tail.Load()))
	require.Equal(t, r.tail.Load(), r.head.Load())
	require.Zero(t, r.log.WordAt(16).Load())
}

// FuzzResync: whatever the ring holds, Resync never reads outside it,
// moves head forward by what it reports and never past the limit, and
// leaves the skipped bytes zero.
func FuzzResync(f *testing.F) {
	f.Add(make([]byte, 256), uint16(0), uint16(64))
	f.Add([]byte{24, 0, 0, 0, 1, 0, 0, 0}, uint16(8), uint16(200))
	f.Fuzz(func(t *testing.T, content []byte, head, span uint16) {
		r := newTestRing(t, 256, true)
		copy(r.records, content)
		h := int64(head) &^ (Alignment - 1)
		limit := h + int64(span%257)&^(Alignment-1)
		r.head.Store(h)
		r.rd.consumed = h
		skipped := r.rd.Resync(limit)
		require.GreaterOrEqual(t, skipped, int64(0))
		require.LessOrEqual(t, skipped, max(limit-h, 0))
		require.Equal(t, h+skipped, r.head.Load())
		for p := h; p < h+skipped; p += Alignment {
			require.Zero(t, r.log.WordAt(int(p&r.log.mask)).Load(), "skipped bytes are zeroed")
		}
	})
}
