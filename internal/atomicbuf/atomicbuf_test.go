package atomicbuf

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewRejectsMisalignedBuffer(t *testing.T) {
	b := Make(64)
	for off := 1; off < 8; off++ {
		_, err := New(b.Bytes()[off:])
		require.ErrorIs(t, err, ErrMisaligned, "offset %d", off)
	}
	_, err := New(b.Bytes()[8:])
	require.NoError(t, err)
	_, err = New(nil)
	require.NoError(t, err, "an empty buffer has no address to misalign")
}

func TestMakeIsAlignedAndZeroed(t *testing.T) {
	for _, n := range []int{1, 7, 8, 9, 4096 + 768} {
		b := Make(n)
		require.Equal(t, n, b.Len())
		_, err := New(b.Bytes())
		require.NoError(t, err)
		for _, c := range b.Bytes() {
			require.Zero(t, c)
		}
	}
	require.Zero(t, Make(0).Len())
}

func TestCheckedAccessorsReportBadIndices(t *testing.T) {
	b := Make(32)
	cases := []struct {
		index, size int
		want        error
	}{
		{-8, 8, ErrOutOfBounds},
		{32, 8, ErrOutOfBounds},
		{28, 8, ErrOutOfBounds},
		{30, 4, ErrOutOfBounds},
		{4, 8, ErrMisaligned},
		{2, 4, ErrMisaligned},
		{24, 8, nil},
		{28, 4, nil},
	}
	for _, c := range cases {
		err := b.Check(c.index, c.size)
		if c.want == nil {
			require.NoError(t, err, "%+v", c)
		} else {
			require.ErrorIs(t, err, c.want, "%+v", c)
		}
	}
	_, err := b.LoadInt64(40)
	require.ErrorIs(t, err, ErrOutOfBounds)
	require.ErrorIs(t, b.StoreInt64(3, 1), ErrMisaligned)
	_, err = b.CompareAndSwapInt64(-1, 0, 1)
	require.True(t, errors.Is(err, ErrOutOfBounds) || errors.Is(err, ErrMisaligned))
	_, err = b.AddInt64(32, 1)
	require.ErrorIs(t, err, ErrOutOfBounds)
	_, err = b.LoadInt32(33)
	require.ErrorIs(t, err, ErrOutOfBounds)
	require.ErrorIs(t, b.StoreInt32(1, 1), ErrMisaligned)
	_, err = b.CompareAndSwapInt32(32, 0, 1)
	require.ErrorIs(t, err, ErrOutOfBounds)
	_, err = b.AddInt32(-4, 1)
	require.ErrorIs(t, err, ErrOutOfBounds)
	require.ErrorIs(t, b.Need(33), ErrOutOfBounds)
	require.NoError(t, b.Need(32))
}

func TestOperationsAreLittleEndianWords(t *testing.T) {
	b := Make(16)
	require.NoError(t, b.StoreInt64(8, 0x0102030405060708))
	require.Equal(t, []byte{8, 7, 6, 5, 4, 3, 2, 1}, b.Bytes()[8:16])
	v, err := b.AddInt64(8, 1)
	require.NoError(t, err)
	require.Equal(t, int64(0x0102030405060709), v)
	ok, err := b.CompareAndSwapInt64(8, 1, 2)
	require.NoError(t, err)
	require.False(t, ok)
	ok, err = b.CompareAndSwapInt64(8, v, -1)
	require.NoError(t, err)
	require.True(t, ok)
	got, err := b.LoadInt64(8)
	require.NoError(t, err)
	require.Equal(t, int64(-1), got)

	require.NoError(t, b.StoreInt32(4, -2))
	require.Equal(t, []byte{0xfe, 0xff, 0xff, 0xff}, b.Bytes()[4:8])
	v32, err := b.AddInt32(4, 3)
	require.NoError(t, err)
	require.Equal(t, int32(1), v32)
	ok, err = b.CompareAndSwapInt32(4, 1, 7)
	require.NoError(t, err)
	require.True(t, ok)
	g32, err := b.LoadInt32(4)
	require.NoError(t, err)
	require.Equal(t, int32(7), g32)
}

func TestStoreReleasePublishesPrecedingWrites(t *testing.T) {
	// A message-passing litmus test: the payload written before the release
	// store must be seen by a reader that observes the flag.
	const rounds = 20000
	b := Make(128)
	flag := b.Int64At(64)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := int64(1); i <= rounds; i++ {
			for flag.Load() != 2*i-1 {
			}
			payload := b.Bytes()[0:8]
			for j := range payload {
				if payload[j] != byte(i) {
					t.Errorf("round %d: payload byte %d = %d", i, j, payload[j])
					return
				}
			}
			StoreRelease64(flag, 2*i)
		}
	}()
	for i := int64(1); i <= rounds; i++ {
		for flag.Load() != 2*i-2 {
		}
		for j := 0; j < 8; j++ {
			b.Bytes()[j] = byte(i)
		}
		StoreRelease64(flag, 2*i-1)
	}
	wg.Wait()
	StoreRelease64Pair(b.Int64At(0), 11, b.Int64At(8), 12)
	require.Equal(t, int64(11), b.Int64At(0).Load())
	require.Equal(t, int64(12), b.Int64At(8).Load())
	StoreRelease64Triple(b.Int64At(16), 21, b.Int64At(24), 22, b.Int64At(32), 23)
	require.Equal(t, []int64{21, 22, 23}, []int64{b.Int64At(16).Load(), b.Int64At(24).Load(), b.Int64At(32).Load()})
	w := b.Int32At(96)
	StoreRelease32(w, 5)
	require.Equal(t, int32(5), w.Load())
}
