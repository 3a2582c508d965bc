package ringbuf

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func TestHotPathsDoNotAllocate(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	forKinds(t, func(t *testing.T, k kind) {
		r := newRing(t, k, 1<<16)
		payload := make([]byte, 32)
		batch := [][]byte{payload, payload, payload}
		var sink int
		handler := func(typeID int32, p []byte) { sink += len(p) }
		controlled := func(typeID int32, p []byte) Action { sink += len(p); return Commit }
		full := newRing(t, k, 64)
		for full.Write(1, make([]byte, 8)) == nil {
		}
		cases := map[string]func(){
			"write+read": func() {
				_ = r.Write(1, payload)
				_, _ = r.Read(handler, NoLimit)
			},
			"claim+commit+controlled read": func() {
				c, _ := r.TryClaim(1, 32)
				_ = r.Commit(c.Index)
				_, _ = r.ControlledRead(controlled, NoLimit)
			},
			"batch": func() {
				_ = r.WriteBatch(1, batch)
				b, _ := r.TryClaimBatch(2 * RecordSize(32))
				_, _ = b.Append(1, 32)
				_, _ = b.Append(2, 32)
				_ = r.CommitBatch(b)
				_, _ = r.Read(handler, NoLimit)
			},
			"records": func() {
				rs, _ := r.TryClaimRecords(1, 32, 16)
				for i := range rs.Len() {
					rs.Payload(i)[0] = byte(i)
				}
				_ = r.CommitRecords(rs)
				_, _ = r.Read(handler, NoLimit)
			},
			"full": func() {
				if full.Write(1, payload[:8]) != ErrFull {
					panic("expected ErrFull")
				}
			},
			"ready": func() {
				// The cases share r and run in any order; a read stops at
				// the end of the ring, so whatever they left is read here
				// (twice at most) after the poll that must find the message.
				_ = r.Write(1, payload)
				if !r.Ready() {
					panic("not ready with a message")
				}
				for range 2 {
					if r.Ready() {
						_, _ = r.Read(handler, NoLimit)
					}
				}
			},
			"size and positions": func() {
				sink += r.Size() + int(r.ProducerPosition()+r.ConsumerPosition()+r.NextCorrelationID())
			},
		}
		for name, f := range cases {
			require.Zero(t, testing.AllocsPerRun(1000, f), name)
		}
	})
}

func TestDemoteDoesNotAllocate(t *testing.T) {
	r, err := NewManyToOne(make([]byte, 16<<10+TrailerLength))
	require.NoError(t, err)
	payload := make([]byte, 32)
	h := func(int32, []byte) {}
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		for range 20 {
			_ = r.Write(1, payload)
		}
		_, _ = r.Read(h, NoLimit)
	}))
}

// TestAllocateAligned: Allocate's buffers start on a 128-byte boundary
// (records on a line, each trailer slot a pair of lines), are zeroed and
// are exactly capacity + TrailerLength bytes long.
func TestAllocateAligned(t *testing.T) {
	for _, capacity := range []int{64, 1024, 16 << 10, 1 << 20} {
		for range 5 {
			b, err := Allocate(capacity)
			require.NoError(t, err)
			require.Len(t, b, capacity+TrailerLength)
			require.Equal(t, capacity+TrailerLength, cap(b))
			require.Zero(t, uintptr(unsafe.Pointer(&b[0]))%128, "a 128-byte boundary: records on a cache line, each trailer slot a pair of lines")
			require.Equal(t, make([]byte, len(b)), b)
		}
	}
}
