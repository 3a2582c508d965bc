package ringbuf

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRecords(t *testing.T) {
	forKinds(t, func(t *testing.T, k kind) {
		r := newRing(t, k, 1024)
		require.NoError(t, r.Write(4, []byte("before")))
		tail := r.ProducerPosition()

		rs, err := r.TryClaimRecords(7, 13, 5)
		require.NoError(t, err)
		require.Equal(t, 5, rs.Len())
		require.Equal(t, tail+int64(5*RecordSize(13)), r.ProducerPosition(), "one claim for all the records")
		for i := range rs.Len() {
			p := rs.Payload(i)
			require.Len(t, p, 13)
			copy(p, fmt.Sprintf("record %d.....", i))
		}
		require.Nil(t, rs.Payload(-1))
		require.Nil(t, rs.Payload(5))
		require.Equal(t, []msg{{4, "before"}}, drain(t, r), "claimed records block the consumer until committed")

		require.NoError(t, r.CommitRecords(rs))
		got := drain(t, r)
		require.Len(t, got, 5)
		for i, m := range got {
			require.Equal(t, msg{7, fmt.Sprintf("record %d.....", i)}, m)
		}
		require.ErrorIs(t, r.CommitRecords(rs), ErrNotClaimed, "a second commit")
		require.ErrorIs(t, r.AbortRecords(rs), ErrNotClaimed, "an abort after the commit")
		require.Equal(t, r.ProducerPosition(), r.ConsumerPosition())

		// One record, and zero-length payloads.
		one, err := r.TryClaimRecords(2, 0, 1)
		require.NoError(t, err)
		require.Empty(t, one.Payload(0))
		require.NoError(t, r.CommitRecords(one))
		require.Equal(t, []msg{{2, ""}}, drain(t, r))

		// Aborted records are skipped as one padding record, and what was
		// written after them is delivered.
		ab, err := r.TryClaimRecords(6, 8, 3)
		require.NoError(t, err)
		require.NoError(t, r.Write(9, []byte("after")))
		require.NoError(t, r.AbortRecords(ab))
		require.ErrorIs(t, r.AbortRecords(ab), ErrAborted)
		require.ErrorIs(t, r.CommitRecords(ab), ErrNotClaimed)
		require.Equal(t, []msg{{9, "after"}}, drain(t, r))
		require.Equal(t, r.ProducerPosition(), r.ConsumerPosition())
	})
}

func TestRecordsWrapAsOneBlock(t *testing.T) {
	forKinds(t, func(t *testing.T, k kind) {
		r := newRing(t, k, 256)
		for range 6 {
			require.NoError(t, r.Write(1, make([]byte, 24))) // 0..192
		}
		drain(t, r)
		rs, err := r.TryClaimRecords(2, 8, 5) // 80 bytes: 64 left at the end, so pad and go to 0
		require.NoError(t, err)
		require.Equal(t, int64(256+80), r.ProducerPosition())
		for i := range 5 {
			rs.Payload(i)[0] = byte(i)
		}
		require.NoError(t, r.CommitRecords(rs))
		got := drain(t, r)
		require.Len(t, got, 5)
		for i, m := range got {
			require.Equal(t, int32(2), m.typeID)
			require.Equal(t, byte(i), m.payload[0])
		}
	})
}

func TestRecordsInvalidArguments(t *testing.T) {
	forKinds(t, func(t *testing.T, k kind) {
		r := newRing(t, k, 1024)
		for _, c := range []struct {
			typeID        int32
			length, count int
			want          error
		}{
			{0, 8, 1, ErrTypeID},
			{-3, 8, 1, ErrTypeID},
			{1, -1, 1, ErrLength},
			{1, r.MaxMessageLength() + 1, 1, ErrTooLong},
			{1, 8, 0, ErrLength},
			{1, 8, -1, ErrLength},
			{1, 8, 1024/RecordSize(8) + 1, ErrTooLong},
			{1, 8, 1 << 60, ErrTooLong}, // count * size overflows
		} {
			_, err := r.TryClaimRecords(c.typeID, c.length, c.count)
			require.ErrorIs(t, err, c.want, "type %d, length %d, count %d", c.typeID, c.length, c.count)
		}
		require.Zero(t, r.ProducerPosition(), "nothing claimed")

		other := newRing(t, k, 1024)
		rs, err := other.TryClaimRecords(1, 8, 2)
		require.NoError(t, err)
		require.ErrorIs(t, r.CommitRecords(rs), ErrNotClaimed, "records of another ring")
		require.ErrorIs(t, r.AbortRecords(rs), ErrNotClaimed, "records of another ring")
		require.ErrorIs(t, r.CommitRecords(Records{}), ErrNotClaimed, "zero Records")
		require.NoError(t, other.CommitRecords(rs))

		// A full ring: ErrFull itself, as for every claim.
		small := newRing(t, k, 64)
		_, err = small.TryClaimRecords(1, 8, 2)
		require.NoError(t, err)
		_, err = small.TryClaimRecords(1, 8, 3)
		require.True(t, err == ErrFull, "got %v", err)
	})
}

func TestUnblockDeadRecords(t *testing.T) {
	r := newRing(t, kinds[1], 1024)
	_, err := r.TryClaimRecords(3, 16, 4) // the producer dies before the commit
	require.NoError(t, err)
	require.NoError(t, r.Write(5, []byte("alive")))
	require.Empty(t, drain(t, r))
	ok, err := unblock(r)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []msg{{5, "alive"}}, drain(t, r), "the dead records are skipped whole")
}

var _ = errors.Is
