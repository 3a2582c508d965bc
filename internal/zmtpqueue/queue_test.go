package zmtpqueue

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dutyrt/duty/internal/zmtpwire"
)

// ledger checks exactly-once delivery of (producer, seq) pairs and, per
// consumer, each producer's order.
type ledger struct {
	mu    sync.Mutex
	once  [][]bool
	total int
}

func newLedger(producers, per int) *ledger {
	l := &ledger{once: make([][]bool, producers)}
	for p := range l.once {
		l.once[p] = make([]bool, per)
	}
	return l
}

func (l *ledger) see(t *testing.T, last []int, parts [][]byte) {
	p := int(binary.BigEndian.Uint32(parts[0]))
	i := int(binary.BigEndian.Uint32(parts[1]))
	if i <= last[p] {
		t.Errorf("producer %d message %d after %d", p, i, last[p])
	}
	last[p] = i
	l.mu.Lock()
	if l.once[p][i] {
		t.Errorf("producer %d message %d twice", p, i)
	}
	l.once[p][i] = true
	l.total++
	l.mu.Unlock()
}

func (l *ledger) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}

func seqMsg(b *[8]byte, p, i int) [][]byte {
	binary.BigEndian.PutUint32(b[:4], uint32(p))
	binary.BigEndian.PutUint32(b[4:], uint32(i))
	return [][]byte{b[:4], b[4:]}
}

// Senders that wait for room (as SendContext does) and two writers that
// take batches, on a small Out whose ring wraps many times, some
// messages too large for a record (by ref slot): every message comes out
// once, whole, each writer sees each sender's messages in order, the
// high-water mark holds, and no waiter is forgotten (the test would hang).
func TestOutQueueManySendersAndWriters(t *testing.T) {
	const hwm = 8
	q := NewOut(hwm)
	producers, per := 4, 4000*soak()
	big := pattern(7, 3*inlineMax)
	var pwg sync.WaitGroup
	for p := range producers {
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			var b [8]byte
			for i := range per {
				msg := seqMsg(&b, p, i)
				if i%13 == p {
					msg = append(msg, big)
				}
				for !q.TryPut(msg) {
					q.Waiters.Add(1)
					if !q.HasRoom() {
						<-q.NotFull
					}
					q.Waiters.Add(-1)
				}
				q.PassNotFull()
			}
		}()
	}
	l := newLedger(producers, per)
	total := producers * per
	var cwg sync.WaitGroup
	for range 2 {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			last := []int{-1, -1, -1, -1}
			var b Batch
			for l.count() < total {
				n := q.Take(&b)
				if n == 0 {
					if q.Pending() {
						runtime.Gosched()
						continue
					}
					q.Sleepers.Add(1)
					if !q.Pending() && l.count() < total {
						select {
						case <-q.NotEmpty:
						case <-t.Context().Done():
						}
					}
					q.Sleepers.Add(-1)
					continue
				}
				if held := q.Count(); held > hwm {
					t.Errorf("%d messages held, the high-water mark is %d", held, hwm)
				}
				d := batchDecoder(q, &b)
				for range n {
					k, err := d.Next()
					require.NoError(t, err)
					require.Equal(t, zmtpwire.KindMessage, k)
					parts := d.Parts()
					if len(parts) == 3 && !bytes.Equal(parts[2], big) {
						t.Error("a large part came out changed")
					}
					l.see(t, last, parts)
				}
				q.Done(&b)
				Signal(q.NotEmpty) // the other writer may wait for the end
			}
		}()
	}
	pwg.Wait()
	cwg.Wait()
	require.Equal(t, total, l.count())
	require.Zero(t, q.Count())
	require.False(t, q.Pending())
	q.refMu.Lock()
	require.Len(t, q.refFree, len(q.refs), "every ref slot is free again")
	q.refMu.Unlock()
}

// batchDecoder returns a Decoder over the bytes a writer would write for
// the batch b took from q.
func batchDecoder(q *Out, b *Batch) *zmtpwire.Decoder {
	var data []byte
	for _, v := range q.Vector(b) {
		data = append(data, v...)
	}
	return zmtpwire.NewDecoder(bytes.NewReader(data), 0, 0)
}

// The ring never refuses a message the high-water mark admits: messages
// small enough for the ring fill it, then the rest go by ref slot, and all
// hwm of them come out in order; the next is refused.
func TestOutQueueRingKeepsRoomForTheHWM(t *testing.T) {
	const hwm = 2000
	q := NewOut(hwm)
	body := pattern(3, inlineMax-40) // with the sequence parts, within inlineMax
	var b [8]byte
	for i := range hwm {
		require.True(t, q.TryPut(append(seqMsg(&b, 0, i), body)), "message %d", i)
	}
	require.False(t, q.TryPut(seqMsg(&b, 0, hwm)), "beyond the high-water mark")
	q.refMu.Lock()
	refs := len(q.refs)
	q.refMu.Unlock()
	require.NotZero(t, refs, "the ring should have filled")
	require.Less(t, refs, hwm)

	l := newLedger(1, hwm)
	last := []int{-1}
	var ob Batch
	for l.count() < hwm {
		n := q.Take(&ob)
		require.NotZero(t, n)
		d := batchDecoder(q, &ob)
		for range n {
			_, err := d.Next()
			require.NoError(t, err)
			require.Equal(t, body, d.Parts()[2])
			l.see(t, last, d.Parts())
		}
		q.Done(&ob)
	}
	require.Zero(t, q.Count())
	require.True(t, q.TryPut(seqMsg(&b, 0, 0)))
}

// Readers that reserve room and commit runs of frames, and two receivers
// that take whole buffers and hand out their messages, on a small
// inQueue: exactly once, in each reader's order per receiver, the bound
// held, nobody left waiting.
func TestInQueueManyReadersAndReceivers(t *testing.T) {
	const hwm = 8
	q := NewIn(hwm)
	producers, per := 3, 2000*soak()
	var pwg sync.WaitGroup
	for p := range producers {
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			var b [8]byte
			for i := 0; i < per; {
				room, err := q.Reserve(context.Background(), 1+p*3)
				require.NoError(t, err)
				// Frames of up to room messages, committed as two runs.
				var frames []byte
				n := 0
				for ; n < room && i+n < per; n++ {
					frames = zmtpwire.AppendMessage(frames, seqMsg(&b, p, i+n))
				}
				half := len(frames) / 2
				q.Commit([][]byte{frames[:half], frames[half:]}, n, room)
				i += n
			}
		}()
	}
	l := newLedger(producers, per)
	var cwg sync.WaitGroup
	for range 2 {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			last := []int{-1, -1, -1}
			var data []byte
			var bigs [][]byte
			for l.count() < producers*per {
				var n int
				if data, n = q.Take(data, &bigs); n == 0 {
					select {
					case <-q.NotEmpty:
					case <-t.Context().Done():
						return
					}
					continue
				}
				require.LessOrEqual(t, n, hwm)
				for off := 0; off < len(data); {
					var parts [][]byte
					off, parts = nextParts(data, off)
					l.see(t, last, parts)
				}
				Signal(q.NotEmpty)
			}
		}()
	}
	pwg.Wait()
	cwg.Wait()
	require.Equal(t, producers*per, l.count())
}

// The tail's message count and byte position wrap (at 2^23 messages and
// 2^40 bytes): a queue started just short of both carries messages across
// the wrap in order, the high-water mark counted right on both sides.
func TestOutQueueWrapsItsCounters(t *testing.T) {
	const hwm = 16
	q := NewOut(hwm)
	m0, pos0 := uint64(msgMask-5), uint64(posMask-40)
	q.tail.Store(nextTail(0, m0, pos0))
	q.head.Store(pos0)
	q.taken.Store(m0)
	q.takenPos = pos0
	q.written.Store(m0)
	l := newLedger(1, 200)
	last := []int{-1}
	var b [8]byte
	var ob Batch
	for i := 0; i < 200; {
		for ; i < 200 && q.TryPut(seqMsg(&b, 0, i)); i++ {
		}
		if i < 200 {
			require.Equal(t, hwm, q.Count(), "full at the high-water mark")
		}
		held := q.Count()
		n := q.Take(&ob)
		require.Equal(t, held, n)
		d := batchDecoder(q, &ob)
		for range n {
			_, err := d.Next()
			require.NoError(t, err)
			l.see(t, last, d.Parts())
		}
		q.Done(&ob)
		require.Zero(t, q.Count())
	}
	require.Equal(t, 200, l.count())
	require.Less(t, msgsOf(q.tail.Load()), m0, "the message count wrapped")
	require.Less(t, q.tail.Load()&posMask, pos0, "the byte position wrapped")
}

// A tail word loaded before writers wrote past it is stale, not full: held
// says so (negative), and a send that loaded it looks again rather than
// report the high-water mark (as it did once: a race soak caught it).
func TestOutQueueStaleTailIsNotFull(t *testing.T) {
	q := NewOut(4)
	stale := q.tail.Load()
	var b [8]byte
	var ob Batch
	for i := range 3 {
		require.True(t, q.TryPut(seqMsg(&b, 0, i)))
	}
	require.Equal(t, 3, q.Take(&ob))
	q.Done(&ob)
	require.Negative(t, q.held(stale), "written has passed the stale tail")
	require.Zero(t, q.Count())
	require.True(t, q.HasRoom())
}

// Small messages through a ring with room to spare never take a ref
// slot, however the writer's releases interleave with the sends of
// several senders (a send that loaded the tail before a release past it
// loads it again).
func TestOutQueueSmallMessagesStayInTheRing(t *testing.T) {
	q := NewOut(64)
	const senders, per = 3, 100_000
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ob Batch
		for got := 0; got < senders*per; {
			k := q.Take(&ob)
			if k == 0 {
				runtime.Gosched()
				continue
			}
			got += k
			q.Done(&ob)
		}
	}()
	var wg sync.WaitGroup
	for p := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var b [8]byte
			for i := 0; i < per; {
				if q.TryPut(seqMsg(&b, p, i)) {
					i++
				} else {
					runtime.Gosched()
				}
			}
		}()
	}
	wg.Wait()
	<-done
	q.refMu.Lock()
	defer q.refMu.Unlock()
	require.Empty(t, q.refs, "a small message took a ref slot")
}

// A burst of large messages leaves at most refKeep buffers behind in the
// queue's free ref slots.
func TestOutQueueKeepsFewLargeBuffers(t *testing.T) {
	const n = 64
	q := NewOut(n)
	big := pattern(5, 2*inlineMax)
	for range n {
		require.True(t, q.TryPut([][]byte{big}))
	}
	var ob Batch
	for q.Take(&ob) > 0 {
		q.Done(&ob)
	}
	q.refMu.Lock()
	defer q.refMu.Unlock()
	require.Len(t, q.refs, n, "each message had a slot")
	kept := 0
	for _, s := range q.refs {
		if s.buf != nil {
			kept++
		}
	}
	require.Equal(t, refKeep, kept)
}

// nextParts returns the parts of the message whose frames start at off
// in b, and where the next message starts.
func nextParts(b []byte, off int) (int, [][]byte) {
	var parts [][]byte
	for {
		f := b[off]
		size, h := zmtpwire.FrameSize(b[off:])
		parts = append(parts, b[off+h:off+h+size])
		off += h + size
		if f&zmtpwire.FlagMore == 0 {
			return off, parts
		}
	}
}

// pattern returns n bytes depending on seed and offset.
func pattern(seed, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seed*131 + i*7 + i>>8)
	}
	return b
}

// soak multiplies the stress tests' iteration counts (DUTY_SOAK).
func soak() int {
	if n, err := strconv.Atoi(os.Getenv("DUTY_SOAK")); err == nil && n > 0 {
		return n
	}
	return 1
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
