package ringbuf

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/record"
)

type kind struct {
	name string
	new  func([]byte) (ringBuffer, error)
	min  int
	// reserve is the extra space a one-to-one claim needs for pre-zeroing.
	reserve int
}

var kinds = []kind{
	{"OneToOne", func(b []byte) (ringBuffer, error) { return NewOneToOne(b) }, minCapacityOneToOne, HeaderLength},
	{"ManyToOne", func(b []byte) (ringBuffer, error) { return NewManyToOne(b) }, minCapacityManyToOne, 0},
}

func newRing(t testing.TB, k kind, capacity int) ringBuffer {
	t.Helper()
	buf, err := Allocate(capacity)
	require.NoError(t, err)
	r, err := k.new(buf)
	require.NoError(t, err)
	return r
}

func forKinds(t *testing.T, f func(t *testing.T, k kind)) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) { f(t, k) })
	}
}

type msg struct {
	typeID  int32
	payload string
}

// drain reads until a read delivers nothing twice in a row (a read can stop
// at padding at the end of the ring with messages waiting at the start).
func drain(t testing.TB, r ringBuffer) []msg {
	t.Helper()
	var got []msg
	empty := 0
	for empty < 2 {
		n, err := r.Read(func(typeID int32, p []byte) { got = append(got, msg{typeID, string(p)}) }, NoLimit)
		require.NoError(t, err)
		if n == 0 {
			empty++
		} else {
			empty = 0
		}
	}
	return got
}

func TestConstructorRejectsBadBuffers(t *testing.T) {
	forKinds(t, func(t *testing.T, k kind) {
		for _, n := range []int{0, 1, TrailerLength, TrailerLength + 3, TrailerLength + 100, TrailerLength + 1023} {
			_, err := k.new(make([]byte, n))
			require.ErrorIs(t, err, ErrCapacity, "length %d", n)
		}
		_, err := k.new(make([]byte, TrailerLength+k.min/2))
		require.ErrorIs(t, err, ErrCapacity, "below minimum capacity")
		_, err = k.new(make([]byte, TrailerLength+k.min))
		require.NoError(t, err)

		big, err := Allocate(2048)
		require.NoError(t, err)
		_, err = k.new(big[4 : 4+1024+TrailerLength])
		require.ErrorIs(t, err, ErrCapacity)
	})
	_, err := Allocate(100)
	require.ErrorIs(t, err, ErrCapacity)
	_, err = Allocate(0)
	require.ErrorIs(t, err, ErrCapacity)
}

func TestConstructorNeverWritesToTheBuffer(t *testing.T) {
	forKinds(t, func(t *testing.T, k kind) {
		buf, err := Allocate(1024)
		require.NoError(t, err)
		r, err := k.new(buf)
		require.NoError(t, err)
		require.NoError(t, r.Write(3, []byte("live")))
		before := bytes.Clone(buf)
		late, err := k.new(buf)
		require.NoError(t, err)
		require.Equal(t, before, buf)
		require.Equal(t, []msg{{3, "live"}}, drain(t, late))
	})
}

func TestInvalidArguments(t *testing.T) {
	forKinds(t, func(t *testing.T, k kind) {
		r := newRing(t, k, 1024)
		max := r.MaxMessageLength()
		require.Equal(t, 128, max)

		require.ErrorIs(t, r.Write(0, nil), ErrTypeID)
		require.ErrorIs(t, r.Write(-1, nil), ErrTypeID)
		require.ErrorIs(t, r.Write(1, make([]byte, max+1)), ErrTooLong)
		require.NoError(t, r.Write(1, make([]byte, max)))
		_, err := r.TryClaim(1, -1)
		require.ErrorIs(t, err, ErrLength)
		_, err = r.TryClaim(0, 1)
		require.ErrorIs(t, err, ErrTypeID)
		_, err = r.TryClaim(1, max+1)
		require.ErrorIs(t, err, ErrTooLong)
		_, err = r.TryClaimBatch(0)
		require.ErrorIs(t, err, ErrLength)
		_, err = r.TryClaimBatch(2048)
		require.ErrorIs(t, err, ErrTooLong, "a batch larger than the ring can never fit")
		b, err := r.TryClaimBatch(RecordSize(8))
		require.NoError(t, err)
		_, err = b.Append(0, 1)
		require.ErrorIs(t, err, ErrTypeID)
		_, err = b.Append(1, -1)
		require.ErrorIs(t, err, ErrLength)
		_, err = b.Append(1, 9)
		require.ErrorIs(t, err, ErrTooLong, "more than the batch claimed")
		require.NoError(t, r.AbortBatch(b))
		var never Batch
		_, err = never.Append(1, 1)
		require.ErrorIs(t, err, ErrNotClaimed)
		require.ErrorIs(t, r.CommitBatch(never), ErrNotClaimed)
		require.ErrorIs(t, r.WriteBatch(1, nil), ErrLength)
		require.ErrorIs(t, r.WriteBatch(0, [][]byte{{1}}), ErrTypeID)
		require.ErrorIs(t, r.WriteBatch(1, [][]byte{{1}, make([]byte, max+1)}), ErrTooLong)
		_, err = r.Read(nil, 1)
		require.ErrorIs(t, err, ErrNilHandler)
		_, err = r.ControlledRead(nil, 1)
		require.ErrorIs(t, err, ErrNilHandler)
		require.Equal(t, []msg{{1, string(make([]byte, max))}}, drain(t, r), "failed calls wrote nothing")
	})
}

func TestCommitAndAbortValidateTheIndex(t *testing.T) {
	forKinds(t, func(t *testing.T, k kind) {
		r := newRing(t, k, 1024)
		for _, index := range []int{-8, 0, 4, 7, 1024 + 8, 1 << 40, 13} {
			require.ErrorIs(t, r.Commit(index), record.ErrIndex, "index %d", index)
			require.ErrorIs(t, r.Abort(index), record.ErrIndex, "index %d", index)
		}
		require.ErrorIs(t, r.Commit(8), ErrNotClaimed, "never claimed")
		require.ErrorIs(t, r.Abort(8), ErrNotClaimed, "never claimed")

		c, err := r.TryClaim(2, 4)
		require.NoError(t, err)
		require.Equal(t, HeaderLength, c.Index)
		copy(c.Payload, "abcd")
		require.NoError(t, r.Commit(c.Index))
		err = r.Commit(c.Index)
		require.ErrorIs(t, err, record.ErrCommitted)
		require.ErrorIs(t, err, ErrNotClaimed)
		require.ErrorIs(t, r.Abort(c.Index), record.ErrCommitted)

		a, err := r.TryClaim(2, 4)
		require.NoError(t, err)
		require.NoError(t, r.Abort(a.Index))
		err = r.Abort(a.Index)
		require.ErrorIs(t, err, ErrAborted)
		require.ErrorIs(t, err, ErrNotClaimed)
		require.ErrorIs(t, r.Commit(a.Index), ErrAborted)

		require.Equal(t, []msg{{2, "abcd"}}, drain(t, r), "an aborted claim is skipped as padding")
	})
}

func TestClaimBlocksTheConsumerUntilCompleted(t *testing.T) {
	forKinds(t, func(t *testing.T, k kind) {
		r := newRing(t, k, 1024)
		require.NoError(t, r.Write(1, []byte("a")))
		c, err := r.TryClaim(1, 1)
		require.NoError(t, err)
		require.NoError(t, r.Write(1, []byte("c")))
		require.Equal(t, []msg{{1, "a"}}, drain(t, r), "FIFO: the consumer stops at the open claim")
		c.Payload[0] = 'b'
		require.NoError(t, r.Commit(c.Index))
		require.Equal(t, []msg{{1, "b"}, {1, "c"}}, drain(t, r))
	})
}

func TestReadLimitAndPositions(t *testing.T) {
	forKinds(t, func(t *testing.T, k kind) {
		r := newRing(t, k, 1024)
		n, err := r.Read(func(int32, []byte) { t.Fatal("empty ring delivered") }, NoLimit)
		require.NoError(t, err)
		require.Zero(t, n)
		for i := 0; i < 5; i++ {
			require.NoError(t, r.Write(int32(i+1), []byte{byte(i)}))
		}
		require.Equal(t, 5*16, r.Size())
		require.Equal(t, int64(80), r.ProducerPosition())
		var types []int32
		n, err = r.Read(func(typeID int32, p []byte) { types = append(types, typeID) }, 2)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		require.Equal(t, []int32{1, 2}, types)
		require.Equal(t, int64(32), r.ConsumerPosition())
		require.Equal(t, 48, r.Size())
		n, err = r.Read(func(int32, []byte) {}, 0)
		require.NoError(t, err)
		require.Zero(t, n)
		require.Len(t, drain(t, r), 3)
		require.Zero(t, r.Size())

		require.Equal(t, int64(0), r.NextCorrelationID())
		require.Equal(t, int64(1), r.NextCorrelationID())
		require.Equal(t, int64(2), r.NextCorrelationID())
		require.Zero(t, r.ConsumerHeartbeatTime())
		r.SetConsumerHeartbeatTime(42)
		require.Equal(t, int64(42), r.ConsumerHeartbeatTime())
		require.Equal(t, 1024, r.Capacity())
		require.Len(t, r.Buffer(), 1024+TrailerLength)
	})
}

func TestWrapCases(t *testing.T) {
	forKinds(t, func(t *testing.T, k kind) {
		const capacity = 256
		t.Run("exact fit at the end", func(t *testing.T) {
			r := newRing(t, k, capacity)
			for i := 0; i < 7; i++ {
				require.NoError(t, r.Write(1, make([]byte, 24))) // 0..224
			}
			drain(t, r)
			require.NoError(t, r.Write(2, []byte("end-of-ring-24-bytes....")))
			require.Equal(t, int64(capacity), r.ProducerPosition(), "no padding")
			require.Equal(t, []msg{{2, "end-of-ring-24-bytes...."}}, drain(t, r))
			require.NoError(t, r.Write(3, []byte("start")))
			require.Equal(t, int64(capacity+16), r.ProducerPosition())
			require.Equal(t, []msg{{3, "start"}}, drain(t, r))
		})
		t.Run("8 bytes left", func(t *testing.T) {
			r := newRing(t, k, capacity)
			for i := 0; i < 7; i++ {
				require.NoError(t, r.Write(1, make([]byte, 24)))
			}
			require.NoError(t, r.Write(1, make([]byte, 16))) // 224..248
			drain(t, r)
			require.NoError(t, r.Write(2, []byte("x"))) // pads 248..256, goes to 0
			require.Equal(t, int64(capacity+16), r.ProducerPosition())
			require.Equal(t, int32(8), le32(r.Buffer(), 248))
			require.Equal(t, paddingTypeID, le32(r.Buffer(), 252))
			require.Equal(t, []msg{{2, "x"}}, drain(t, r))
		})
		t.Run("padding plus insufficient", func(t *testing.T) {
			r := newRing(t, k, capacity)
			require.NoError(t, r.Write(1, nil)) // 0..8
			for i := 0; i < 6; i++ {
				require.NoError(t, r.Write(1, make([]byte, 24))) // 8..200
			}
			require.NoError(t, r.Write(1, make([]byte, 24))) // 200..232
			// Leave 24 bytes at the end and too little before head for the
			// next record (one-to-one needs 8 more than many-to-one).
			consumed, payload := 1, 24
			if k.reserve > 0 {
				consumed, payload = 2, 32
			}
			n, err := r.Read(func(int32, []byte) {}, consumed)
			require.NoError(t, err)
			require.Equal(t, consumed, n)
			require.GreaterOrEqual(t, capacity-r.Size(), RecordSize(payload)+k.reserve, "enough free space in all")
			require.ErrorIs(t, r.Write(3, make([]byte, payload)), ErrFull)
			require.Equal(t, int64(capacity), r.ProducerPosition(), "the end was padded")
			require.Equal(t, paddingTypeID, le32(r.Buffer(), 236))
			require.Len(t, drain(t, r), 8-consumed)
			require.NoError(t, r.Write(3, make([]byte, payload)))
			got := drain(t, r)
			require.Len(t, got, 1)
			require.Equal(t, int32(3), got[0].typeID)
		})
		t.Run("claim then abort at the wrap", func(t *testing.T) {
			r := newRing(t, k, capacity)
			for i := 0; i < 7; i++ {
				require.NoError(t, r.Write(1, make([]byte, 24))) // 0..224
			}
			drain(t, r)
			c, err := r.TryClaim(1, 32) // 40 bytes: pads 224..256, claims 0..40
			require.NoError(t, err)
			require.Equal(t, HeaderLength, c.Index)
			require.NoError(t, r.Write(2, []byte("after")))
			require.Empty(t, drain(t, r))
			require.NoError(t, r.Abort(c.Index))
			require.Equal(t, []msg{{2, "after"}}, drain(t, r))
		})
	})
}

func TestControlledRead(t *testing.T) {
	forKinds(t, func(t *testing.T, k kind) {
		fill := func(r ringBuffer, n int) {
			for i := 0; i < n; i++ {
				require.NoError(t, r.Write(1, []byte{byte(i)}))
			}
		}
		t.Run("abort redelivers, earlier messages stay consumed", func(t *testing.T) {
			r := newRing(t, k, 1024)
			fill(r, 4)
			var seen []byte
			n, err := r.ControlledRead(func(_ int32, p []byte) Action {
				seen = append(seen, p[0])
				if p[0] == 2 {
					return Abort
				}
				return Continue
			}, NoLimit)
			require.NoError(t, err)
			require.Equal(t, 2, n)
			require.Equal(t, []byte{0, 1, 2}, seen)
			require.Equal(t, int64(32), r.ConsumerPosition())
			require.Equal(t, []msg{{1, "\x02"}, {1, "\x03"}}, drain(t, r))
		})
		t.Run("break consumes and stops", func(t *testing.T) {
			r := newRing(t, k, 1024)
			fill(r, 4)
			n, err := r.ControlledRead(func(_ int32, p []byte) Action {
				if p[0] == 1 {
					return Break
				}
				return Continue
			}, NoLimit)
			require.NoError(t, err)
			require.Equal(t, 2, n)
			require.Equal(t, int64(32), r.ConsumerPosition())
			require.Len(t, drain(t, r), 2)
		})
		t.Run("commit releases space mid-batch", func(t *testing.T) {
			r := newRing(t, k, 1024)
			fill(r, 4)
			var positions []int64
			n, err := r.ControlledRead(func(_ int32, p []byte) Action {
				positions = append(positions, r.ConsumerPosition())
				if p[0] == 1 {
					return Commit
				}
				return Continue
			}, NoLimit)
			require.NoError(t, err)
			require.Equal(t, 4, n)
			require.Equal(t, []int64{0, 0, 32, 32}, positions, "head moves at the commit, not at the end")
			require.Equal(t, int64(64), r.ConsumerPosition())
			if k.name == "ManyToOne" {
				require.Equal(t, make([]byte, 64), r.Buffer()[:64])
			}
		})
		t.Run("commit then abort", func(t *testing.T) {
			r := newRing(t, k, 1024)
			fill(r, 3)
			n, err := r.ControlledRead(func(_ int32, p []byte) Action {
				switch p[0] {
				case 0:
					return Commit
				case 1:
					return Abort
				}
				return Continue
			}, NoLimit)
			require.NoError(t, err)
			require.Equal(t, 1, n)
			require.Equal(t, int64(16), r.ConsumerPosition())
			require.Len(t, drain(t, r), 2)
		})
		t.Run("limit", func(t *testing.T) {
			r := newRing(t, k, 1024)
			fill(r, 3)
			n, err := r.ControlledRead(func(int32, []byte) Action { return Continue }, 2)
			require.NoError(t, err)
			require.Equal(t, 2, n)
			require.Len(t, drain(t, r), 1)
		})
	})
}

func TestHandlerPanicConsumesTheMessage(t *testing.T) {
	forKinds(t, func(t *testing.T, k kind) {
		for _, controlled := range []bool{false, true} {
			r := newRing(t, k, 1024)
			require.NoError(t, r.Write(1, []byte("a")))
			require.NoError(t, r.Write(1, []byte("boom")))
			require.NoError(t, r.Write(1, []byte("c")))
			var seen []string
			require.Panics(t, func() {
				if controlled {
					_, _ = r.ControlledRead(func(_ int32, p []byte) Action {
						seen = append(seen, string(p))
						if string(p) == "boom" {
							panic("handler failed")
						}
						return Continue
					}, NoLimit)
					return
				}
				_, _ = r.Read(func(_ int32, p []byte) {
					seen = append(seen, string(p))
					if string(p) == "boom" {
						panic("handler failed")
					}
				}, NoLimit)
			})
			require.Equal(t, []string{"a", "boom"}, seen)
			// The next read releases "a" and "boom" first: neither comes back.
			require.Equal(t, []msg{{1, "c"}}, drain(t, r))
			require.Equal(t, int64(48), r.ConsumerPosition())
			require.Zero(t, r.Size())
			if k.name == "ManyToOne" {
				require.Equal(t, make([]byte, 48), r.Buffer()[:48], "released space is zeroed")
			}
		}
	})
}

func TestBatches(t *testing.T) {
	forKinds(t, func(t *testing.T, k kind) {
		r := newRing(t, k, 1024)
		require.NoError(t, r.WriteBatch(4, [][]byte{[]byte("one"), []byte("two-two"), nil, []byte("four")}))
		tail := r.ProducerPosition()
		require.Equal(t, int64(16+16+8+16), tail)

		b, err := r.TryClaimBatch(3 * RecordSize(8))
		require.NoError(t, err)
		require.Equal(t, 48, b.b.Len())
		for i := 0; i < 3; i++ {
			p, err := b.Append(int32(5+i), 8)
			require.NoError(t, err)
			copy(p, []byte{'p', byte('0' + i), 0, 0, 0, 0, 0, 'z'})
		}
		require.Zero(t, b.Remaining())
		require.Equal(t, tail+48, r.ProducerPosition(), "one claim for the batch")
		require.Equal(t, []msg{{4, "one"}, {4, "two-two"}, {4, ""}, {4, "four"}}, drain(t, r), "the claimed batch blocks until committed")
		require.NoError(t, r.CommitBatch(b))
		require.ErrorIs(t, r.CommitBatch(b), record.ErrCommitted)
		got := drain(t, r)
		require.Len(t, got, 3)
		for i, m := range got {
			require.Equal(t, int32(5+i), m.typeID)
			require.Equal(t, "p"+string(rune('0'+i))+"\x00\x00\x00\x00\x00z", m.payload)
		}

		// A partly filled batch: the rest becomes padding.
		pb, err := r.TryClaimBatch(100)
		require.NoError(t, err)
		require.Equal(t, 104, pb.b.Len())
		p, err := pb.Append(8, 3)
		require.NoError(t, err)
		copy(p, "abc")
		require.NoError(t, r.CommitBatch(pb))
		require.NoError(t, r.Write(9, []byte("later")))
		require.Equal(t, []msg{{8, "abc"}, {9, "later"}}, drain(t, r))

		// An empty batch commits as padding.
		eb, err := r.TryClaimBatch(16)
		require.NoError(t, err)
		require.NoError(t, r.CommitBatch(eb))
		require.Empty(t, drain(t, r))

		ab, err := r.TryClaimBatch(2 * RecordSize(4))
		require.NoError(t, err)
		_, err = ab.Append(6, 4)
		require.NoError(t, err)
		require.NoError(t, r.Write(7, []byte("next")))
		require.NoError(t, r.AbortBatch(ab))
		require.ErrorIs(t, r.AbortBatch(ab), ErrAborted)
		require.Equal(t, []msg{{7, "next"}}, drain(t, r))
	})
}

func TestBatchWrapsAsOneBlock(t *testing.T) {
	forKinds(t, func(t *testing.T, k kind) {
		r := newRing(t, k, 256)
		for i := 0; i < 6; i++ {
			require.NoError(t, r.Write(1, make([]byte, 24))) // 0..192
		}
		drain(t, r)
		b, err := r.TryClaimBatch(5 * RecordSize(8)) // 80 bytes: 64 left at the end, so pad and go to 0
		require.NoError(t, err)
		require.Equal(t, int64(256+80), r.ProducerPosition())
		for i := 0; i < 5; i++ {
			p, err := b.Append(2, 8)
			require.NoError(t, err)
			p[0] = byte(i)
		}
		require.NoError(t, r.CommitBatch(b))
		got := drain(t, r)
		require.Len(t, got, 5)
		for i, m := range got {
			require.Equal(t, byte(i), m.payload[0])
		}
	})
}

func TestCorruptRecordsAreErrorsNotPanics(t *testing.T) {
	forKinds(t, func(t *testing.T, k kind) {
		corrupt := []struct {
			name   string
			length int32
			typeID int32
		}{
			{"runs past the end", 2000, 1},
			{"shorter than a header", 5, 1},
			{"type zero", 16, 0},
			{"type below padding", 16, -7},
		}
		for _, c := range corrupt {
			r := newRing(t, k, 1024)
			require.NoError(t, r.Write(1, []byte("ok")))
			buf := r.Buffer()
			putLE32(buf, 16, c.length)
			putLE32(buf, 20, c.typeID)
			var got []string
			n, err := r.Read(func(_ int32, p []byte) { got = append(got, string(p)) }, NoLimit)
			require.ErrorIs(t, err, ErrCorrupt, c.name)
			require.Equal(t, 1, n, c.name)
			require.Equal(t, []string{"ok"}, got, "%s: messages before the corruption are delivered", c.name)
			require.Equal(t, int64(16), r.ConsumerPosition(), "%s: head stops at the corrupt record", c.name)
			_, err = r.ControlledRead(func(int32, []byte) Action { return Continue }, NoLimit)
			require.ErrorIs(t, err, ErrCorrupt, c.name)
		}
		r := newRing(t, k, 1024)
		putLE64(r.Buffer(), 1024+headPositionOffset, 3)
		_, err := r.Read(func(int32, []byte) {}, NoLimit)
		require.ErrorIs(t, err, ErrCorrupt, "misaligned head")
		r = newRing(t, k, 1024)
		putLE64(r.Buffer(), 1024+tailPositionOffset, 5)
		require.ErrorIs(t, r.Write(1, nil), ErrCorrupt, "misaligned tail")
		r = newRing(t, k, 1024)
		c, err := r.TryClaim(1, 8)
		require.NoError(t, err)
		putLE32(r.Buffer(), c.Index-HeaderLength, -5000)
		require.ErrorIs(t, r.Commit(c.Index), ErrCorrupt, "a claim length past the end")
	})
}

func putLE32(b []byte, i int, v int32) {
	b[i], b[i+1], b[i+2], b[i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

func putLE64(b []byte, i int, v int64) {
	putLE32(b, i, int32(v))
	putLE32(b, i+4, int32(v>>32))
}

var _ = errors.Is

// TestPendingReleaseAgainstAMovedHead: after a handler's panic the next
// read releases what the panicking read consumed. If head was rewritten
// meanwhile (the ring is in a shared file: a hostile or crashed process),
// that range may cross the end of the ring: it is ErrCorrupt, and the read
// after it goes on from head. It used to zero the range with a slice past
// the records and panic.
func TestPendingReleaseAgainstAMovedHead(t *testing.T) {
	forKinds(t, func(t *testing.T, k kind) {
		r := newRing(t, k, 256)
		for range 7 {
			require.NoError(t, r.Write(1, make([]byte, 24))) // 0..224
		}
		drain(t, r)
		require.NoError(t, r.Write(1, make([]byte, 16))) // 224..248
		drain(t, r)
		require.NoError(t, r.Write(1, []byte("boom")))    // 256..272 (after padding)
		n, err := r.Read(func(int32, []byte) {}, NoLimit) // the padding
		require.NoError(t, err)
		require.Zero(t, n)
		require.Panics(t, func() {
			_, _ = r.Read(func(int32, []byte) { panic("handler") }, NoLimit)
		})
		buf := r.Buffer()
		putLE64(buf, 256+headPositionOffset, 192) // head rewritten, 80 bytes back
		putLE32(buf, 192, 16)                     // over a record that looks committed
		putLE32(buf, 196, 1)
		require.NotPanics(t, func() { _, err = r.Read(func(int32, []byte) {}, NoLimit) })
		require.ErrorIs(t, err, ErrCorrupt)
		var got []msg
		n, err = r.Read(func(typeID int32, p []byte) { got = append(got, msg{typeID, string(p)}) }, 1)
		require.NoError(t, err)
		require.Equal(t, 1, n, "the next read goes on from head")
		require.Equal(t, []msg{{1, string(make([]byte, 8))}}, got)
	})
}
