package record

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/atomicbuf"
)

// The tests of the many-to-one claim protocol that need to stop it between
// two steps (the test hooks); the rest are package ringbuf's, through its
// API (unblock_test.go there).

// deadClaim simulates a producer that died right after its tail CAS,
// before writing anything: the tail moves, the space stays zero.
func deadClaim(t testing.TB, r *testRing, payload int) int {
	t.Helper()
	index, err := r.p.Claim(Size(payload))
	require.NoError(t, err)
	return index
}

func TestUnblockBackwardRecheckSeesASlowProducer(t *testing.T) {
	r := newTestRing(t, 1024, true)
	deadClaim(t, r, 30) // 0..40, "dead"
	require.NoError(t, r.p.Write(1, []byte("after")))
	testHookUnblockScan = func(consumerIndex, gapEnd int) {
		require.Equal(t, 0, consumerIndex)
		require.Equal(t, 40, gapEnd)
		// The producer was only slow: it writes its claim marker now.
		r.p.Mark(0, 38, 1)
	}
	defer func() { testHookUnblockScan = nil }()
	ok, err := r.p.Unblock()
	require.NoError(t, err)
	require.False(t, ok, "the backward re-check sees the late write")
	testHookUnblockScan = nil
	r.p.Publish(0, 38)
	got := r.drain(t)
	require.Len(t, got, 2)
	require.Equal(t, msg{1, "after"}, got[1])
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
		r := newTestRing(t, 1024, true)
		index := deadClaim(t, r, 30) // 0..40: CAS done, nothing written yet
		require.NoError(t, r.p.Write(1, []byte("after")))
		payload := "a slow producer's thirty bytes"
		testHookUnblockPad = func(int) {
			// PublishRecord's first store: the marker with the type.
			atomicbuf.StoreRelease64(r.p.WordAt(index), Marker(len(payload), 7))
		}
		_, err := r.p.Unblock()
		require.NoError(t, err)
		testHookUnblockPad = nil
		got := r.drain(t)
		copy(r.p.Payload(index, len(payload)), payload) // the producer goes on
		r.p.Publish(index, len(payload)+HeaderLength)
		got = append(got, r.drain(t)...)
		checkDelivered(t, got, payload)
		require.Contains(t, got, msg{7, payload}, "the claim was alive: its message arrives")
	})

	t.Run("batch marker, the producer's first append lands", func(t *testing.T) {
		r := newTestRing(t, 1024, true)
		b, err := r.p.TryClaimBatch(2 * Size(8)) // marker -32, no type yet
		require.NoError(t, err)
		require.NoError(t, r.p.Write(1, []byte("after")))
		testHookUnblockPad = func(int) {
			p, err := b.Append(5, 8) // stores the first record's type
			require.NoError(t, err)
			copy(p, "first...")
		}
		_, err = r.p.Unblock()
		require.NoError(t, err)
		testHookUnblockPad = nil
		got := r.drain(t)
		if p, err := b.Append(5, 8); err == nil {
			copy(p, "second..")
			_ = r.p.CommitBatch(b) // ErrAborted if it was unblocked
		}
		got = append(got, r.drain(t)...)
		for _, m := range got {
			if m.typeID == 5 {
				require.Len(t, m.payload, 8, "a message of the batch was delivered torn: %q", m.payload)
			}
		}
	})
}

// TestCommitAfterUnblockIsAbortedWhole: Unblock pads a run of records or
// a batch whose producer is merely slow, after the producer checked its
// marker and before it publishes. The commit used to store the first
// record's length into the padding's header: the padding shrank to the
// first record, and the records after it were delivered, a torn run,
// while the commit reported success. Now the publication (PublishClaim)
// is a compare-and-swap that fails against Unblock's: the commit reports
// ErrAborted and nothing of the run is delivered; a message written after
// it still arrives. (ringbuf's CommitRecords is the first case: its
// headers, then PublishClaim.)
func TestCommitAfterUnblockIsAbortedWhole(t *testing.T) {
	defer func() { testHookPublishClaim = nil }()
	for _, tc := range []struct {
		name   string
		commit func(r *testRing) error
	}{
		{"records", func(r *testRing) error {
			const n, length = 4, 8
			total := n * Size(length)
			index, err := r.p.Claim(total)
			if err != nil {
				return err
			}
			r.p.Mark(index, total, 7)
			marker := r.p.WordAt(index).Load()
			for i := range n {
				at := index + i*Size(length)
				if i > 0 {
					r.p.WordAt(at).Store(HeaderWord(length+HeaderLength, 7))
				}
				copy(r.p.Payload(at, length), "torn????")
			}
			return r.p.PublishClaim(index, marker, total, length+HeaderLength)
		}},
		{"batch", func(r *testRing) error {
			b, err := r.p.TryClaimBatch(4 * Size(8))
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
			return r.p.CommitBatch(b)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRing(t, 1024, true)
			unblocked := false
			testHookPublishClaim = func(int) {
				testHookPublishClaim = nil
				var err error
				unblocked, err = r.p.Unblock() // the consumer's liveness check gives up on the claim
				require.NoError(t, err)
			}
			err := tc.commit(r)
			require.True(t, unblocked)
			require.ErrorIs(t, err, ErrAborted)
			require.ErrorIs(t, err, ErrNotClaimed)
			require.NoError(t, r.p.Write(1, []byte("after")))
			require.Equal(t, []msg{{1, "after"}}, r.drain(t), "the run is padding, whole")
			require.Equal(t, r.tail.Load(), r.head.Load())
		})
	}
	t.Run("no unblock", func(t *testing.T) {
		// The compare-and-swap succeeds when nothing intervened (every
		// other commit test), here with the hook set to do nothing.
		r := newTestRing(t, 1024, true)
		testHookPublishClaim = func(int) {}
		b, err := r.p.TryClaimBatch(3 * Size(0))
		require.NoError(t, err)
		for range 3 {
			_, err := b.Append(7, 0)
			require.NoError(t, err)
		}
		require.NoError(t, r.p.CommitBatch(b))
		testHookPublishClaim = nil
		require.Equal(t, []msg{{7, ""}, {7, ""}, {7, ""}}, r.drain(t))
	})
}
