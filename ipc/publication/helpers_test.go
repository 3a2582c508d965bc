package publication

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/ringbuf"
)

// The publication test message: sender, sequence, then bytes derived from
// both, so that any lost, duplicated, reordered, torn or foreign byte is
// detected. pubLength mixes small messages with ones long enough to be
// fragmented (every 17th, up to max bytes).
const pubTypeID = 5

func pubLength(seq uint64, max int) int {
	if seq%17 == 5 && max > 1024 {
		return 1024 + int(seq*7919%uint64(max-1024+1))
	}
	return 16 + int(seq*7%121)
}

func pubPayload(buf []byte, sender int, seq uint64, n int) []byte {
	p := buf[:n]
	binary.LittleEndian.PutUint32(p[0:], uint32(sender))
	binary.LittleEndian.PutUint64(p[4:], seq)
	binary.LittleEndian.PutUint32(p[12:], uint32(n))
	for i := 16; i < n; i++ {
		p[i] = byte(uint64(sender)*131 + seq*31 + uint64(i)*7)
	}
	return p
}

// checkPubPayload returns the sender and sequence of p, or an error if p
// is not exactly what pubPayload wrote for them.
func checkPubPayload(p []byte) (int, uint64, error) {
	if len(p) < 16 {
		return 0, 0, fmt.Errorf("payload of %d bytes", len(p))
	}
	sender := int(binary.LittleEndian.Uint32(p))
	seq := binary.LittleEndian.Uint64(p[4:])
	if n := int(binary.LittleEndian.Uint32(p[12:])); n != len(p) {
		return sender, seq, fmt.Errorf("sender %d seq %d: %d bytes, header says %d", sender, seq, len(p), n)
	}
	for i := 16; i < len(p); i++ {
		if want := byte(uint64(sender)*131 + seq*31 + uint64(i)*7); p[i] != want {
			return sender, seq, fmt.Errorf("sender %d seq %d: byte %d is %#x, want %#x", sender, seq, i, p[i], want)
		}
	}
	return sender, seq, nil
}

// pubChecker checks exactly-once, per-sender order and content.
type pubChecker struct {
	next  map[int]uint64
	n     int
	bytes int
	err   error
}

func newPubChecker() *pubChecker { return &pubChecker{next: map[int]uint64{}} }

func (c *pubChecker) handle(typeID int32, p []byte) {
	if c.err != nil {
		return
	}
	if typeID != pubTypeID {
		c.err = fmt.Errorf("type %d", typeID)
		return
	}
	sender, seq, err := checkPubPayload(p)
	if err != nil {
		c.err = err
		return
	}
	if seq != c.next[sender] {
		c.err = fmt.Errorf("sender %d: got seq %d, want %d (lost, duplicated or reordered)", sender, seq, c.next[sender])
		return
	}
	c.next[sender]++
	c.n++
	c.bytes += len(p)
}

// fakeClock is an epoch-ms clock a test moves by hand.
type fakeClock struct{ ms atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ms.Store(time.Now().UnixMilli())
	return c
}

func (c *fakeClock) now() int64          { return c.ms.Load() }
func (c *fakeClock) add(d time.Duration) { c.ms.Add(d.Milliseconds()) }
func (c *fakeClock) opt() Option         { return WithClock(millis(c.now)) }

func newTestPublication(t testing.TB, capacity int, opts ...Option) *Publication {
	t.Helper()
	p, err := Create(testDir(t), "pub", capacity, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func newTestSubscription(t testing.TB, p *Publication, opts ...Option) *Subscription {
	t.Helper()
	s, err := OpenSubscription(ctxT(t), p.File().Path(), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func testDirEntries(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names, err
}

func contextWithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}

// newUnblockTest returns a publication of 4096 bytes and a subscription on
// one fake clock, with a 1 s unblock timeout and subscribers never dropped:
// the set-up of the tests of dead and stalled claims.
func newUnblockTest(t testing.TB) (*fakeClock, *Publication, *Subscription) {
	t.Helper()
	clock := newFakeClock()
	p := newTestPublication(t, 4096, clock.opt(), withUnblockTimeout(time.Second), WithSubscriberTimeout(time.Hour))
	return clock, p, newTestSubscription(t, p, clock.opt())
}

// markOwnerDead makes the owner of the file at path look dead to every
// process that opens the file from now on: its start time in the header no
// longer matches its pid's (as after the owner died and the pid was
// reused). With a heartbeat stale on their clock, they see the file
// layer's Dead state. The header is written through the file, not a
// mapping: on Linux both are the same page-cache pages, which Open reads.
func markOwnerDead(t testing.TB, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	var b [8]byte
	_, err = f.ReadAt(b[:], ipcOwnerStartTimeOffset)
	require.NoError(t, err)
	v := binary.LittleEndian.Uint64(b[:])
	require.NotZero(t, v)
	binary.LittleEndian.PutUint64(b[:], v+1)
	_, err = f.WriteAt(b[:], ipcOwnerStartTimeOffset)
	require.NoError(t, err)
}

// newDeadOwnerTest is newUnblockTest with an owner that will be found
// dead: markOwnerDead before the subscription opens. The owner is gone for
// the subscription once the clock has moved past the file's liveness
// timeout (its heartbeat is stale) and not before.
func newDeadOwnerTest(t testing.TB) (*fakeClock, *Publication, *Subscription) {
	t.Helper()
	clock := newFakeClock()
	p := newTestPublication(t, 4096, clock.opt(), withUnblockTimeout(time.Second), WithSubscriberTimeout(time.Hour))
	markOwnerDead(t, p.File().Path())
	return clock, p, newTestSubscription(t, p, clock.opt())
}

// openTestPublisher opens another publisher on p's file, by path, as
// another process would, on the same clock.
func openTestPublisher(t testing.TB, p *Publication, clock *fakeClock) *Publication {
	t.Helper()
	q, err := Open(ctxT(t), p.File().Path(), clock.opt())
	require.NoError(t, err)
	t.Cleanup(func() { _ = q.Close() })
	return q
}

// pollWhileAdvancing polls s, collecting the payloads, and moves the clock
// a minute after each poll, until Poll fails or 20 polls have passed.
func pollWhileAdvancing(s *Subscription, clock *fakeClock) (got []string, err error) {
	h := func(_ int32, b []byte) { got = append(got, string(b)) }
	for i := 0; i < 20 && err == nil; i++ {
		_, err = s.Poll(h, ringbuf.NoLimit)
		clock.add(time.Minute)
	}
	return got, err
}

// unlimitedTail is a tail word for a logReader over a log built by a test:
// every position is below it, so the reader's tail check never stops it.
func unlimitedTail() *atomic.Int64 {
	t := new(atomic.Int64)
	t.Store(math.MaxInt64 &^ sealedBit)
	return t
}

// anUnblock is an unblocked-claims count of one, so that a logReader built
// by a test checks every record against its tail (see logReader.claimed).
func anUnblock() *atomic.Int64 {
	n := new(atomic.Int64)
	n.Store(1)
	return n
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// millis adapts a test's epoch-milliseconds function to a clock.Clock.
type millis func() int64

func (f millis) EpochMillis() int64 { return f() }
func (f millis) Nanos() int64       { return f() * int64(time.Millisecond) }

// The shared file header's layout, from docs/layouts.md (ipc keeps its
// offsets unexported).
const (
	ipcKindOffset           = 12
	ipcSectionCountOffset   = 20
	ipcOwnerStartTimeOffset = 48
	ipcSectionTableOffset   = 256
	ipcSectionEntryLength   = 16
	ipcSectionOffsetField   = 0
	ipcSectionLengthField   = 8
)
