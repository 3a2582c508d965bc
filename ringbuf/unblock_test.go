package ringbuf

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/internal/record"
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
// writing anything: the tail moves, the space stays zero.
func deadClaim(r *ManyToOne, payload int) {
	_, err := r.claim(RecordSize(payload))
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

	o, err := NewOneToOne(make([]byte, 1024+TrailerLength))
	require.NoError(t, err)
	ok, err = o.Unblock()
	require.NoError(t, err)
	require.False(t, ok)
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

func TestUnblockBackwardRecheckSeesASlowProducer(t *testing.T) {
	r := newManyToOne(t, 1024)
	deadClaim(r, 30) // 0..40, "dead"
	require.NoError(t, r.Write(1, []byte("after")))
	testHookUnblockScan = func(consumerIndex, gapEnd int) {
		require.Equal(t, 0, consumerIndex)
		require.Equal(t, 40, gapEnd)
		// The producer was only slow: it writes its claim marker now.
		r.mark(0, 38, 1)
	}
	defer func() { testHookUnblockScan = nil }()
	ok, err := r.Unblock()
	require.NoError(t, err)
	require.False(t, ok, "the backward re-check sees the late write")
	testHookUnblockScan = nil
	r.publish(0, 38)
	got := drain(t, r)
	require.Len(t, got, 2)
	require.Equal(t, msg{1, "after"}, got[1])
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
	putLE64(r.Buffer(), 256+TailPositionOffset, 1000)
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
	index, err := r.claim(RecordSize(24)) // 224..256: CAS done, the producer stalls
	require.NoError(t, err)
	require.Equal(t, 224, index)
	require.Equal(t, int64(256), r.ProducerPosition())
	ok, err := r.Unblock()
	require.NoError(t, err)
	require.False(t, ok, "nothing waits behind the claim: leave it, as in the middle of the ring")

	r.writeRecord(index, 9, []byte("the stalled producer's..")) // it resumes
	require.NoError(t, r.Write(2, make([]byte, 24)))
	got := drain(t, r)
	require.Len(t, got, 2)
	require.Equal(t, int32(9), got[0].typeID)
	require.Equal(t, int32(2), got[1].typeID)
	require.LessOrEqual(t, r.ConsumerPosition(), r.ProducerPosition())
}

// TestUnblockRacingASlowProducerNeverTearsARecord: Unblock decided to pad
// a claim (zeros, or a marker with no type yet) and the producer, only
// slow, writes the claim's header just then. Unblock used to write the
// padding header as two stores, type then length: the producer's header
// store between them left the producer's type under Unblock's length, a
// committed record the consumer delivered with a payload not yet written.
// The padding header is now one compare-and-swap of the word Unblock
// checked: a producer's store before it makes Unblock give up (the claim
// is alive), and after it the producer's own stores keep it padding or an
// open claim, so the consumer sees the message whole or not at all.
func TestUnblockRacingASlowProducerNeverTearsARecord(t *testing.T) {
	defer func() { testHookUnblockPad = nil }()
	checkDelivered := func(t *testing.T, got []msg, want string) {
		t.Helper()
		for _, m := range got {
			if m.typeID != 1 {
				require.Equal(t, want, m.payload, "a message of type %d was delivered torn", m.typeID)
			}
		}
	}

	t.Run("zero gap, the producer's marker lands", func(t *testing.T) {
		r := newManyToOne(t, 1024)
		index, err := r.claim(RecordSize(30)) // 0..40: CAS done, nothing written yet
		require.NoError(t, err)
		require.NoError(t, r.Write(1, []byte("after")))
		payload := "a slow producer's thirty bytes"
		testHookUnblockPad = func(int) {
			// PublishRecord's first store: the marker with the type.
			atomicbuf.StoreRelease64(r.wordAt(index), record.Marker(len(payload), 7))
		}
		_, err = r.Unblock()
		require.NoError(t, err)
		testHookUnblockPad = nil
		got := drain(t, r)
		copy(r.data[index+HeaderLength:], payload) // the producer goes on
		r.publish(index, len(payload)+HeaderLength)
		got = append(got, drain(t, r)...)
		checkDelivered(t, got, payload)
		require.Contains(t, got, msg{7, payload}, "the claim was alive: its message arrives")
	})

	t.Run("batch marker, the producer's first append lands", func(t *testing.T) {
		r := newManyToOne(t, 1024)
		b, err := r.TryClaimBatch(2 * RecordSize(8)) // marker -32, no type yet
		require.NoError(t, err)
		require.NoError(t, r.Write(1, []byte("after")))
		testHookUnblockPad = func(int) {
			p, err := b.Append(5, 8) // stores the first record's type
			require.NoError(t, err)
			copy(p, "first...")
		}
		_, err = r.Unblock()
		require.NoError(t, err)
		testHookUnblockPad = nil
		got := drain(t, r)
		if p, err := b.Append(5, 8); err == nil {
			copy(p, "second..")
			_ = r.CommitBatch(b) // ErrAborted if it was unblocked
		}
		got = append(got, drain(t, r)...)
		for _, m := range got {
			if m.typeID == 5 {
				require.Len(t, m.payload, 8, "a message of the batch was delivered torn: %q", m.payload)
			}
		}
	})
}

// TestCommitAfterUnblockIsAbortedWhole: Unblock pads a batch or records
// whose producer is merely slow, after the producer checked its marker and
// before it publishes. The commit used to store the first record's length
// into the padding's header: the padding shrank to the first record, and
// the records after it were delivered, a torn run, while the commit
// reported success. Now the publication is a compare-and-swap that fails
// against Unblock's: the commit reports ErrAborted and nothing of the run
// is delivered; a message written after it still arrives.
func TestCommitAfterUnblockIsAbortedWhole(t *testing.T) {
	defer func() { testHookPublishClaim = nil }()
	for _, tc := range []struct {
		name   string
		commit func(r *ManyToOne) error
	}{
		{"records", func(r *ManyToOne) error {
			rs, err := r.TryClaimRecords(7, 8, 4)
			if err != nil {
				return err
			}
			for i := range 4 {
				copy(rs.Payload(i), "torn????")
			}
			return r.CommitRecords(rs)
		}},
		{"batch", func(r *ManyToOne) error {
			b, err := r.TryClaimBatch(4 * RecordSize(8))
			if err != nil {
				return err
			}
			for range 3 { // and padding after them
				p, err := b.Append(7, 8)
				if err != nil {
					return err
				}
				copy(p, "torn????")
			}
			return r.CommitBatch(b)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newManyToOne(t, 1024)
			unblocked := false
			testHookPublishClaim = func(int) {
				testHookPublishClaim = nil
				var err error
				unblocked, err = r.Unblock() // the consumer's liveness check gives up on the claim
				require.NoError(t, err)
			}
			err := tc.commit(r)
			require.True(t, unblocked)
			require.ErrorIs(t, err, ErrAborted)
			require.ErrorIs(t, err, ErrNotClaimed)
			require.NoError(t, r.Write(1, []byte("after")))
			require.Equal(t, []msg{{1, "after"}}, drain(t, r), "the run is padding, whole")
			require.Equal(t, r.ProducerPosition(), r.ConsumerPosition())
		})
	}
	t.Run("no unblock", func(t *testing.T) {
		// The compare-and-swap succeeds when nothing intervened (every
		// other commit test), here with the hook set to do nothing.
		r := newManyToOne(t, 1024)
		testHookPublishClaim = func(int) {}
		rs, err := r.TryClaimRecords(7, 0, 3)
		require.NoError(t, err)
		require.NoError(t, r.CommitRecords(rs))
		testHookPublishClaim = nil
		require.Equal(t, []msg{{7, ""}, {7, ""}, {7, ""}}, drain(t, r))
	})
}
