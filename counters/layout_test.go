package counters

import (
	"bytes"
	"math"
	"testing"
	"time"
	"unsafe"

	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/stretchr/testify/require"
)

// The constants of Agrona's counters layout (docs/agrona.md, "Counters";
// docs/layouts.md), written out again as literals so that a change to
// layout.go breaks this test.
func TestLayoutConstantsMatchAgrona(t *testing.T) {
	require.Equal(t, 128, valueRecordLength)
	require.Equal(t, 0, valueFieldOffset)
	require.Equal(t, 8, registrationIDOffset)
	require.Equal(t, 16, ownerIDOffset)
	require.Equal(t, 24, referenceIDOffset)
	require.Equal(t, 512, metadataRecordLength)
	require.Equal(t, 0, stateOffset)
	require.Equal(t, 4, typeIDOffset)
	require.Equal(t, 8, freeForReuseDeadlineOffset)
	require.Equal(t, 16, keyOffset)
	require.Equal(t, 112, maxKeyLength)
	require.Equal(t, 128, labelLengthOffset)
	require.Equal(t, 132, labelOffset)
	require.Equal(t, 380, maxLabelLength)
	require.Equal(t, 384, fullLabelLength)
	require.Equal(t, 4, metadataToValuesRatio)
	require.Equal(t, int32(0), stateUnused)
	require.Equal(t, int32(1), StateAllocated)
	require.Equal(t, int32(-1), StateReclaimed)
	require.Equal(t, int64(math.MaxInt64), notFreeToReuse)
	require.Equal(t, -1, nullCounterID)
	require.Equal(t, metadataRecordLength, labelOffset+maxLabelLength, "the label fills the record")
	require.Equal(t, labelLengthOffset, keyOffset+maxKeyLength, "the key is followed by the label length")
}

// Raw bytes written by the manager, checked at the documented offsets with
// plain little-endian decoding (not through the package's accessors).
func TestLayoutRawBytes(t *testing.T) {
	clock := newClock(5000)
	m, meta, vals := mustManager(t, 4, Config{FreeToReuseTimeout: 250 * time.Millisecond, Clock: clock})

	key := []byte("key-bytes")
	c0 := allocate(t, m, "first", 1001, key)
	c1 := allocate(t, m, "second", 7, nil)
	c0.Set(0x0102030405060708)
	c0.setOwnerID(77)
	c0.setReferenceID(-5)
	c1.Add(3)

	// Value records, 128 bytes apart.
	require.Equal(t, int64(0x0102030405060708), le64(vals, 0*128+0))
	require.Equal(t, int64(1), le64(vals, 0*128+8), "registration id")
	require.Equal(t, int64(77), le64(vals, 0*128+16), "owner id")
	require.Equal(t, int64(-5), le64(vals, 0*128+24), "reference id")
	require.Equal(t, int64(3), le64(vals, 1*128+0))
	require.Equal(t, int64(2), le64(vals, 1*128+8))
	require.Equal(t, make([]byte, 96), vals[32:128], "padding untouched")

	// Metadata records, 512 bytes apart.
	require.Equal(t, int32(1), le32(meta, 0), "state ALLOCATED")
	require.Equal(t, int32(1001), le32(meta, 4), "type id")
	require.Equal(t, int64(math.MaxInt64), le64(meta, 8), "NOT_FREE_TO_REUSE")
	require.Equal(t, append(key, make([]byte, 112-len(key))...), meta[16:128], "key, zero-padded")
	require.Equal(t, int32(5), le32(meta, 128), "label length")
	require.Equal(t, "first", string(meta[132:137]))
	require.Equal(t, int32(1), le32(meta, 512+0))
	require.Equal(t, int32(7), le32(meta, 512+4))
	require.Equal(t, int32(6), le32(meta, 512+128))
	require.Equal(t, "second", string(meta[512+132:512+138]))
	require.Equal(t, int32(0), le32(meta, 2*512), "id 2 unused")

	// Free: RECLAIMED, key zeroed, deadline now + timeout; value, label and
	// registration id stay until reuse.
	require.NoError(t, c0.Close())
	require.Equal(t, int32(-1), le32(meta, 0))
	require.Equal(t, int64(5250), le64(meta, 8))
	require.Equal(t, make([]byte, 112), meta[16:128])
	require.Equal(t, "first", string(meta[132:137]))
	require.Equal(t, int64(0x0102030405060708), le64(vals, 0))
	require.Equal(t, int64(1), le64(vals, 8))

	// Reuse after the deadline: value record reset, new registration id.
	clock.Set(5250)
	c2 := allocate(t, m, "third-label", 9, []byte{1, 2})
	require.Equal(t, 0, c2.ID())
	require.Equal(t, int32(1), le32(meta, 0))
	require.Equal(t, int32(9), le32(meta, 4))
	require.Equal(t, int64(math.MaxInt64), le64(meta, 8))
	require.Equal(t, []byte{1, 2}, meta[16:18])
	require.Equal(t, int32(11), le32(meta, 128))
	require.Equal(t, "third-label", string(meta[132:143]))
	require.Equal(t, []int64{0, 3, 0, 0}, []int64{le64(vals, 0), le64(vals, 8), le64(vals, 16), le64(vals, 24)})
}

func TestLayoutRegions(t *testing.T) {
	r, err := Layout(3)
	require.NoError(t, err)
	require.Equal(t, Regions{Counters: 3, MetadataOffset: 0, MetadataLength: 1536, ValuesOffset: 1536, ValuesLength: 384, Length: 1920}, r)

	for _, n := range []int{0, -1, maxCounters + 1} {
		_, err := Layout(n)
		require.ErrorIs(t, err, ErrArgument, "n=%d", n)
	}
	r, err = Layout(maxCounters)
	require.NoError(t, err)
	require.LessOrEqual(t, r.MetadataLength, math.MaxInt32)

	// Split a buffer laid out by Layout, and a manager and reader over it.
	b, _, err := NewRegions(8) // a zeroed aligned buffer of 8*512 bytes
	require.NoError(t, err)
	b = b[:5*640]
	meta, vals, err := Split(b)
	require.NoError(t, err)
	require.Len(t, meta, 5*512)
	require.Len(t, vals, 5*128)
	require.Equal(t, unsafe.SliceData(b), unsafe.SliceData(meta))
	require.Equal(t, unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), 5*512), unsafe.Pointer(unsafe.SliceData(vals)))
	require.Equal(t, cap(meta), len(meta), "appending to a region cannot spill into the next")

	m, err := NewManager(meta, vals, Config{})
	require.NoError(t, err)
	require.Equal(t, 4, m.maxID)
	allocate(t, m, "in one buffer", 1, nil)
	require.Equal(t, int32(StateAllocated), le32(b, 0))
	require.Equal(t, int64(1), le64(b, 5*512+8), "registration id in the values region")

	for _, n := range []int{0, 639, 641, 1280 + 8} {
		_, _, err := Split(make([]byte, n))
		require.ErrorIs(t, err, ErrArgument, "len=%d", n)
	}
}

func TestNewRegionsAlignsValues(t *testing.T) {
	for n := 1; n < 20; n++ {
		meta, vals, err := NewRegions(n)
		require.NoError(t, err)
		require.Len(t, meta, n*512)
		require.Len(t, vals, n*128)
		require.Zero(t, uintptr(unsafe.Pointer(unsafe.SliceData(vals)))%128)
		require.Zero(t, uintptr(unsafe.Pointer(unsafe.SliceData(meta)))%8)
		require.True(t, bytes.Equal(meta, make([]byte, len(meta))) && bytes.Equal(vals, make([]byte, len(vals))))
	}
}

func TestConstructorsCheckRegions(t *testing.T) {
	meta, vals := newRegions(t, 4)
	ctors := map[string]func(m, v []byte) error{
		"NewManager": func(m, v []byte) error { _, err := NewManager(m, v, Config{}); return err },
		"Recover":    func(m, v []byte) error { _, _, err := Recover(m, v, Config{}); return err },
		"NewReader":  func(m, v []byte) error { _, err := NewReader(m, v); return err },
	}
	for name, ctor := range ctors {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, ctor(meta, vals))
			err := ctor(meta[1:], vals)
			require.ErrorIs(t, err, ErrArgument)
			require.ErrorIs(t, err, atomicbuf.ErrMisaligned)
			require.ErrorIs(t, ctor(meta, vals[4:]), ErrArgument)
			require.ErrorIs(t, ctor(meta, vals[:0]), ErrArgument, "no counters")
			require.ErrorIs(t, ctor(meta, vals[:127]), ErrArgument, "no whole record")
			require.ErrorIs(t, ctor(meta[:4*512-8], vals), ErrArgument, "metadata < 4x values")
			require.NoError(t, ctor(meta[:4*200], vals[:200]), "Agrona accepts a partial last record")
		})
	}
	r, err := NewReader(meta[:4*200], vals[:200])
	require.NoError(t, err)
	require.Equal(t, 0, r.MaxCounterID())
}
