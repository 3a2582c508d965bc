package ringbuf

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/atomicbuf"
)

// TestManyToOneGuessAheadOfARewrittenTail: the many-to-one tail guess
// (record.Producer's hint) never runs ahead of a tail that only grows,
// but a trailer rewritten in a shared file can move the tail back (head <=
// tail, both aligned: nothing flags it). The claim used to decide "full"
// on the guess alone, so this view reported ErrFull for ever on an empty
// ring, while a new view over the same bytes wrote at once. It now checks
// the tail itself before it reports full.
func TestManyToOneGuessAheadOfARewrittenTail(t *testing.T) {
	const capacity = 1024
	buf, err := Allocate(capacity)
	require.NoError(t, err)
	r, err := NewManyToOne(buf)
	require.NoError(t, err)
	for r.Write(1, make([]byte, 56)) == nil {
	}
	require.Equal(t, int64(capacity), r.ProducerPosition())
	// The consumer drains the ring; then the trailer's tail is rewritten
	// back to 0 (and head with it): an empty, valid-looking ring.
	_, err = r.Read(func(int32, []byte) {}, NoLimit)
	require.NoError(t, err)
	clear(buf)
	require.Zero(t, r.ProducerPosition())
	require.Zero(t, r.ConsumerPosition())

	for attempt := range 100 {
		if err := r.Write(1, []byte("old view")); err != ErrFull {
			require.NoError(t, err)
			return
		}
		_, err := r.Read(func(int32, []byte) {}, NoLimit)
		require.NoError(t, err, "attempt %d", attempt)
	}
	fresh, err := NewManyToOne(buf)
	require.NoError(t, err)
	require.NoError(t, fresh.Write(1, []byte("fresh view")), "a new view over the same bytes writes")
	t.Fatalf("the old view reports ErrFull for ever on an empty ring (tail %d, head %d, its guess %d)",
		r.ProducerPosition(), r.ConsumerPosition(), r.p.Hint().Load())
}

// TestStressSmallAndUnalignedRings runs the package's concurrent
// stress (every way to produce, reads and controlled reads with aborts,
// commits and breaks) over rings the existing stress tests do not use:
// 128 bytes (a wrap every few records, batches and records close to the
// whole ring) and 8 KiB rings that prefetch and demote, 40 bytes past a
// 128-byte boundary, with payloads up to 64 bytes (the fast paths).
func TestStressSmallAndUnalignedRings(t *testing.T) {
	n := 40_000
	if testing.Short() {
		n = 5_000
	}
	t.Run("ManyToOne-128", func(t *testing.T) { stress(t, newRing(t, kinds[1], 128), 2, n, 16) })
	t.Run("OneToOne-128", func(t *testing.T) { stress(t, newRing(t, kinds[0], 128), 1, n, 16) })
	for _, k := range kinds {
		t.Run(k.name+"-8192-unaligned", func(t *testing.T) {
			r, err := k.new(offsetBuffer(8192, 40))
			require.NoError(t, err)
			producers := 1
			if k.reserve == 0 {
				producers = 2
			}
			stress(t, r, producers, n, 64)
		})
	}
}

// agronaPlacement is Agrona's claim decision (docs/agrona.md, "Many-to-one claim" and "One-to-one claim") for
// a claim of aligned bytes with the producer and consumer positions tail
// and head: the record index (-1 for "insufficient"), the padding written
// at the end of the ring, and the new tail.
func agronaPlacement(oneToOne bool, capacity int, tail, head int64, aligned int) (index, padding int, newTail int64) {
	required := aligned
	if oneToOne {
		required += HeaderLength
	}
	if int64(required) > int64(capacity)-(tail-head) {
		return -1, 0, tail
	}
	tailIndex := int(tail & int64(capacity-1))
	toEnd := capacity - tailIndex
	if oneToOne && aligned == toEnd {
		return tailIndex, 0, tail + int64(aligned)
	}
	if required > toEnd {
		if required > int(head&int64(capacity-1)) {
			return -1, toEnd, tail + int64(toEnd)
		}
		return 0, toEnd, tail + int64(toEnd+aligned)
	}
	return tailIndex, 0, tail + int64(aligned)
}

// offsetBuffer returns a zeroed buffer for a ring of capacity bytes that
// starts offset bytes past a 128-byte boundary (a caller's buffer, not
// Allocate's).
func offsetBuffer(capacity, offset int) []byte {
	backing := make([]byte, capacity+TrailerLength+256)
	start := (128-int(uintptr(unsafe.Pointer(&backing[0]))%128))%128 + offset
	return backing[start : start+capacity+TrailerLength : start+capacity+TrailerLength]
}

// TestClaimsMatchAgronaPlacement runs both ring types through long
// random sequences of writes (payloads on both sides of the fast paths'
// 64-byte bound, and exactly MaxMessageLength), claims, batches and
// records against Agrona's claim algorithm: every producer call must
// return ErrFull exactly when Agrona is insufficient, move the tail
// exactly as Agrona does (padding included, also on ErrFull), write its
// record at Agrona's index with the padding header Agrona writes, and
// (one-to-one) leave the header after the record zero; the consumer must
// deliver exactly the committed messages, in order, intact. Capacities
// from the minimum to one that prefetches, over Allocate's buffers and
// buffers 8 and 40 bytes past a 128-byte boundary.
func TestClaimsMatchAgronaPlacement(t *testing.T) {
	for _, k := range kinds {
		oneToOne := k.reserve > 0
		for _, capacity := range []int{k.min, 2 * k.min, 32, 64, 512, 8192} {
			for _, offset := range []int{-1, 8, 40} {
				t.Run(fmt.Sprintf("%s/%d/%d", k.name, capacity, offset), func(t *testing.T) {
					var buf []byte
					if offset < 0 {
						var err error
						buf, err = Allocate(capacity)
						require.NoError(t, err)
					} else {
						buf = offsetBuffer(capacity, offset)
					}
					r, err := k.new(buf)
					require.NoError(t, err)
					if oneToOne {
						agronaPlacements(t, r, oneToOne, 6000, uint64(capacity+offset))
						return
					}
					// Two more views of the many-to-one ring (other
					// processes'), whose tail guesses go stale.
					v1, err := k.new(buf)
					require.NoError(t, err)
					v2, err := k.new(buf)
					require.NoError(t, err)
					agronaPlacements(t, r, oneToOne, 6000, uint64(capacity+offset), v1, v2)
				})
			}
		}
	}
}

func agronaPlacements(t *testing.T, r ringBuffer, oneToOne bool, steps int, seed uint64, views ...ringBuffer) {
	rng := rand.New(rand.NewPCG(seed, 11))
	views = append(views, r)
	consumer := r
	capacity := r.Capacity()
	max := r.MaxMessageLength()
	buf := r.Buffer()
	reserve := 0
	if oneToOne {
		reserve = HeaderLength
	}
	var want []msg
	// complete aborts a third of the batches and records, and commits the
	// rest, whose payloads ps the consumer must then deliver as typeID.
	complete := func(abort, commit func() error, typeID int32, ps [][]byte) {
		if rng.IntN(3) == 0 {
			require.NoError(t, abort())
			return
		}
		require.NoError(t, commit())
		for _, p := range ps {
			want = append(want, msg{typeID, string(p)})
		}
	}
	seq := 0
	payload := func(n int) []byte {
		seq++
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(seq*31 + i*7 + 1)
		}
		return p
	}
	length := func() int {
		switch rng.IntN(6) {
		case 0:
			return max
		case 1:
			return min(max, 64)
		case 2:
			return min(max, 65)
		case 3:
			return min(max, rng.IntN(17))
		}
		return rng.IntN(max + 1)
	}
	// produce runs op, a claim of aligned bytes, and checks it against
	// Agrona's placement. It returns the record index, or -1.
	produce := func(what string, aligned int, op func() error) int {
		tail, head := r.ProducerPosition(), r.ConsumerPosition()
		index, padding, newTail := agronaPlacement(oneToOne, capacity, tail, head, aligned)
		padAt := int(tail & int64(capacity-1))
		err := op()
		require.Equal(t, newTail, r.ProducerPosition(), "%s of %d bytes: tail %d, head %d", what, aligned, tail, head)
		if index < 0 {
			require.Equal(t, ErrFull, err, "%s of %d bytes: tail %d, head %d", what, aligned, tail, head)
		} else {
			require.NoError(t, err, "%s of %d bytes: tail %d, head %d", what, aligned, tail, head)
		}
		if padding > 0 {
			require.Equal(t, int32(padding), le32(buf, padAt), "padding length")
			require.Equal(t, paddingTypeID, le32(buf, padAt+typeOffset), "padding type")
		}
		if oneToOne && index >= 0 {
			next := (index + aligned) & (capacity - 1)
			require.Zero(t, le32(buf, next), "%s: header after the record at %d not zeroed", what, index)
		}
		return index
	}
	deliver := func(typeID int32, p []byte) {
		require.NotEmpty(t, want, "delivered a message nobody committed: type %d %x", typeID, p)
		require.Equal(t, want[0], msg{typeID, string(p)})
		want = want[1:]
	}
	for step := 0; step < steps; step++ {
		r := views[rng.IntN(len(views))]
		switch rng.IntN(8) {
		case 0, 1:
			p := payload(length())
			if i := produce("write", RecordSize(len(p)), func() error { return r.Write(1, p) }); i >= 0 {
				require.Equal(t, int32(len(p)+HeaderLength), le32(buf, i))
				require.Equal(t, int32(1), le32(buf, i+typeOffset))
				require.Equal(t, p, buf[i+HeaderLength:i+HeaderLength+len(p)])
				want = append(want, msg{1, string(p)})
			}
		case 2:
			p := payload(length())
			var c Claim
			if i := produce("claim", RecordSize(len(p)), func() (err error) { c, err = r.TryClaim(2, len(p)); return err }); i >= 0 {
				require.Equal(t, i+HeaderLength, c.Index)
				require.Equal(t, -int32(len(p)+HeaderLength), le32(buf, i), "claim marker")
				copy(c.Payload, p)
				if rng.IntN(3) == 0 {
					require.NoError(t, r.Abort(c.Index))
				} else {
					require.NoError(t, r.Commit(c.Index))
					want = append(want, msg{2, string(p)})
				}
			}
		case 3:
			ps := make([][]byte, 1+rng.IntN(3))
			size := 8 * rng.IntN(2)
			for i := range ps {
				ps[i] = payload(length())
				size += RecordSize(len(ps[i]))
			}
			if size > capacity-reserve {
				continue
			}
			var b Batch
			if i := produce("batch", size, func() (err error) { b, err = r.TryClaimBatch(size); return err }); i >= 0 {
				require.Equal(t, -int32(size), le32(buf, i), "batch marker")
				for _, p := range ps {
					dst, err := b.Append(3, len(p))
					require.NoError(t, err)
					copy(dst, p)
				}
				complete(func() error { return r.AbortBatch(b) }, func() error { return r.CommitBatch(b) }, 3, ps)
			}
		case 4:
			n, count := length(), 1+rng.IntN(4)
			if count*RecordSize(n) > capacity-reserve {
				continue
			}
			var rs Records
			if i := produce("records", count*RecordSize(n), func() (err error) { rs, err = r.TryClaimRecords(4, n, count); return err }); i >= 0 {
				require.Equal(t, -int32(count*RecordSize(n)), le32(buf, i), "records marker")
				ps := make([][]byte, count)
				for j := range ps {
					ps[j] = payload(n)
					copy(rs.Payload(j), ps[j])
				}
				complete(func() error { return r.AbortRecords(rs) }, func() error { return r.CommitRecords(rs) }, 4, ps)
			}
		case 5, 6:
			_, err := consumer.Read(deliver, 1+rng.IntN(6))
			require.NoError(t, err)
		case 7:
			_, err := consumer.ControlledRead(func(typeID int32, p []byte) Action {
				a := Action(1 + rng.IntN(4))
				if a != Abort {
					deliver(typeID, p)
				}
				return a
			}, 1+rng.IntN(6))
			require.NoError(t, err)
		}
	}
	for range 3 {
		_, err := r.Read(deliver, NoLimit)
		require.NoError(t, err)
	}
	require.Empty(t, want, "committed messages never delivered")
	require.Equal(t, r.ProducerPosition(), r.ConsumerPosition())
}

// TestHandlerPanicReleasedByTheNextRead pins a documented departure from
// Agrona's read (docs/agrona.md, "Read"; docs/ringbuf.md, "Consuming"): Agrona commits
// head before the exception propagates; here the consuming view records
// the consumption (the record core's Reader.consumed) and releases it at
// its next read, which saves a deferred call on every read. Until
// then other views, and other processes sharing the buffer, see the old
// head: a successor over the same bytes delivers again what the dead
// consumer had handled, the message that panicked included. The consuming
// view itself never does.
func TestHandlerPanicReleasedByTheNextRead(t *testing.T) {
	forKinds(t, func(t *testing.T, k kind) {
		buf, err := Allocate(1024)
		require.NoError(t, err)
		r, err := k.new(buf)
		require.NoError(t, err)
		require.NoError(t, r.Write(1, []byte("a")))
		require.NoError(t, r.Write(1, []byte("boom")))
		require.NoError(t, r.Write(1, []byte("c")))
		require.Panics(t, func() {
			_, _ = r.Read(func(_ int32, p []byte) {
				if string(p) == "boom" {
					panic("handler failed")
				}
			}, NoLimit)
		})
		// Another view over the same bytes (a successor, had the
		// consumer died) still sees head before the handled messages.
		successor, err := k.new(buf)
		require.NoError(t, err)
		require.Zero(t, successor.ConsumerPosition(), "head after the panic, as other views see it")
		// The consuming view's next read releases them first.
		require.Equal(t, []msg{{1, "c"}}, drain(t, r))
		require.Equal(t, r.ProducerPosition(), successor.ConsumerPosition())
	})
}

// TestRecordsCommitRacingUnblock races Unblock against a real CommitRecords
// of a whole ring of records (TestCommitAfterUnblockIsAbortedWhole forces
// the interleaving with a hook): Unblock calls as soon as the second
// header appears, inside the commit's header loop. Either the commit wins
// and every record is delivered, or Unblock does and none is, and the
// commit reports ErrAborted. Before the commit's compare-and-swap, the
// first record's length shrank Unblock's padding and records 1..n-1 were
// delivered while the commit reported success.
func TestRecordsCommitRacingUnblock(t *testing.T) {
	if !atomicbuf.FastRelease {
		// A slow producer against Unblock is a data race by design (plain
		// header stores against the consumer's loads): -race reports it.
		t.Skip("amd64 without -race only")
	}
	const capacity = 1 << 20
	const count = capacity / 8 // records of no payload: the whole ring
	// Each attempt checks whichever side won; neither outcome may tear.
	for range 50 {
		buf, err := Allocate(capacity)
		require.NoError(t, err)
		r, err := NewManyToOne(buf)
		require.NoError(t, err)
		rs, err := r.TryClaimRecords(7, 0, count)
		require.NoError(t, err)
		started := make(chan struct{})
		done := make(chan error, 1) // the sender never blocks, even when the test stops early
		go func() {
			close(started)
			done <- r.CommitRecords(rs)
		}()
		<-started
		second := r.p.LengthAt(RecordSize(0))
		for second.Load() == 0 {
		}
		unblocked, err := r.Unblock()
		require.NoError(t, err)
		commitErr := <-done
		n := 0
		for range 3 {
			k, err := r.Read(func(int32, []byte) {}, NoLimit)
			require.NoError(t, err)
			n += k
		}
		if unblocked {
			require.ErrorIs(t, commitErr, ErrAborted, "Unblock padded the records: the commit fails")
			require.Zero(t, n, "Unblock and a commit of %d records: %d delivered (a torn run)", count, n)
			continue
		}
		require.NoError(t, commitErr, "the commit won: it succeeds")
		require.Equal(t, count, n, "the commit won: every record is delivered")
	}
}
