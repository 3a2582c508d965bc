package ringbuf

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func newManyToOne(t testing.TB, capacity int) *ManyToOne {
	t.Helper()
	buf, err := Allocate(capacity)
	require.NoError(t, err)
	r, err := NewManyToOne(buf)
	require.NoError(t, err)
	return r
}

// deadClaim simulates a producer that died right after its tail CAS, before
// writing anything: the tail moves, the space stays zero. The tests that
// stop the protocol between two of its steps (test hooks) are the record
// core's (internal/record, unblock_test.go).
func deadClaim(r *ManyToOne, payload int) {
	_, err := r.p.Claim(RecordSize(payload))
	if err != nil {
		panic(err)
	}
}

func TestUnblockNothingToDo(t *testing.T) {
	r := newManyToOne(t, 1024)
	ok, err := r.Unblock()
	require.NoError(t, err)
	require.False(t, ok, "empty")
	require.NoError(t, r.Write(1, []byte("x")))
	ok, err = r.Unblock()
	require.NoError(t, err)
	require.False(t, ok, "a committed record is not blocked")
}

func TestUnblockNegativeLengthClaim(t *testing.T) {
	r := newManyToOne(t, 1024)
	require.NoError(t, r.Write(1, []byte("before")))
	_, err := r.TryClaim(1, 20) // the producer dies holding this claim
	require.NoError(t, err)
	require.NoError(t, r.Write(1, []byte("after")))
	require.Equal(t, []msg{{1, "before"}}, drain(t, r))
	ok, err := r.Unblock()
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []msg{{1, "after"}}, drain(t, r))
}

func TestUnblockDeadBatch(t *testing.T) {
	r := newManyToOne(t, 1024)
	b, err := r.TryClaimBatch(4 * RecordSize(8))
	require.NoError(t, err)
	for i := 0; i < 3; i++ { // died while appending the fourth
		_, err := b.Append(1, 8)
		require.NoError(t, err)
	}
	require.NoError(t, r.Write(1, []byte("after")))
	ok, err := r.Unblock()
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []msg{{1, "after"}}, drain(t, r), "the whole batch became one padding record")
}

func TestUnblockZeroGap(t *testing.T) {
	r := newManyToOne(t, 1024)
	require.NoError(t, r.Write(1, []byte("before")))
	drain(t, r)
	deadClaim(r, 30)
	require.NoError(t, r.Write(1, []byte("after")))
	require.Empty(t, drain(t, r))
	ok, err := r.Unblock()
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []msg{{1, "after"}}, drain(t, r))
}

func TestUnblockZeroGapWithNothingAfterIt(t *testing.T) {
	r := newManyToOne(t, 1024)
	deadClaim(r, 30)
	ok, err := r.Unblock()
	require.NoError(t, err)
	require.False(t, ok, "nothing waits behind the claim: leave it (it may still be a slow producer)")
}

func TestUnblockWhenFull(t *testing.T) {
	// agrona#159: comparing positions, not indices, makes a full ring work.
	for _, withHeader := range []bool{true, false} {
		r := newManyToOne(t, 256)
		if withHeader {
			_, err := r.TryClaim(1, 24) // 0..32, marked
			require.NoError(t, err)
		} else {
			deadClaim(r, 24)
		}
		for r.Write(2, make([]byte, 24)) == nil {
		}
		require.Equal(t, int64(256), r.ProducerPosition(), "full")
		ok, err := r.Unblock()
		require.NoError(t, err)
		require.True(t, ok, "withHeader=%v", withHeader)
		require.Len(t, drain(t, r), 7)
	}
}

func TestUnblockZeroGapRunningToTheEndAfterWrap(t *testing.T) {
	r := newManyToOne(t, 256)
	for i := 0; i < 7; i++ {
		require.NoError(t, r.Write(1, make([]byte, 24))) // 0..224
	}
	drain(t, r)
	deadClaim(r, 24)                                  // 224..256, zero
	require.NoError(t, r.Write(2, []byte("wrapped"))) // at 0
	ok, err := r.Unblock()
	require.NoError(t, err)
	require.True(t, ok, "Agrona scans to the end of the ring, finds nothing and stays blocked")
	require.Equal(t, []msg{{2, "wrapped"}}, drain(t, r))
}

func TestUnblockReportsCorruptPositions(t *testing.T) {
	r := newManyToOne(t, 256)
	require.NoError(t, r.Write(1, nil))
	putLE64(r.Buffer(), 256+tailPositionOffset, 1000)
	_, err := r.Unblock()
	require.ErrorIs(t, err, ErrCorrupt, "tail more than a capacity ahead of head")
	r = newManyToOne(t, 256)
	_, err = r.TryClaim(1, 8)
	require.NoError(t, err)
	putLE32(r.Buffer(), 0, -4000)
	_, err = r.Unblock()
	require.ErrorIs(t, err, ErrCorrupt, "claim length past the end")
}

// TestUnblockRejectsAnImpossibleClaimLength: a claim marker no producer
// writes (shorter than a header; math.MinInt32, whose negation overflows
// 32 bits) is corruption. MinInt32 used to pass the bounds check: Unblock
// reported success on every call and changed nothing, and the consumer
// stayed blocked with no error from anyone.
func TestUnblockRejectsAnImpossibleClaimLength(t *testing.T) {
	for _, bad := range []int32{math.MinInt32, -1, -7} {
		r := newManyToOne(t, 256)
		_, err := r.TryClaim(1, 8) // a producer claims 0..16 and dies
		require.NoError(t, err)
		require.NoError(t, r.Write(1, []byte("after")))
		putLE32(r.Buffer(), 0, bad) // the header is corrupted
		ok, err := r.Unblock()
		require.ErrorIs(t, err, ErrCorrupt, "claim length %d", bad)
		require.False(t, ok)
		require.Equal(t, bad, le32(r.Buffer(), 0), "nothing changed")
	}
}

// TestUnblockLeavesAClaimEndingAtTheEndOfTheRing: a claim with nothing
// written and nothing claimed after it is left alone wherever it is, also
// when it ends exactly at the end of the ring (it used to be padded there,
// as if the producers had wrapped). It may be a slow producer's: here it
// resumes, and its message arrives in order.
func TestUnblockLeavesAClaimEndingAtTheEndOfTheRing(t *testing.T) {
	r := newManyToOne(t, 256)
	for range 7 {
		require.NoError(t, r.Write(1, make([]byte, 24))) // 0..224
	}
	drain(t, r)
	index, err := r.p.Claim(RecordSize(24)) // 224..256: CAS done, the producer stalls
	require.NoError(t, err)
	require.Equal(t, 224, index)
	require.Equal(t, int64(256), r.ProducerPosition())
	ok, err := r.Unblock()
	require.NoError(t, err)
	require.False(t, ok, "nothing waits behind the claim: leave it, as in the middle of the ring")

	r.p.WriteRecord(index, 9, []byte("the stalled producer's..")) // it resumes
	require.NoError(t, r.Write(2, make([]byte, 24)))
	got := drain(t, r)
	require.Len(t, got, 2)
	require.Equal(t, int32(9), got[0].typeID)
	require.Equal(t, int32(2), got[1].typeID)
	require.LessOrEqual(t, r.ConsumerPosition(), r.ProducerPosition())
}
