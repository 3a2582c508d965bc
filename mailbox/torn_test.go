package mailbox

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dutyrt/duty/internal/mailboxframe"
	"github.com/dutyrt/duty/internal/record"
	"github.com/dutyrt/duty/ringbuf"
	"github.com/stretchr/testify/require"
)

// sendHalf starts a framed message of body payload from s and stops after
// upTo of its records, leaving the batch claimed and never committed: a
// sender that died half-way through a fragmented message.
func sendHalf(t testing.TB, s *Sender, typeID int32, payload []byte, upTo int) {
	t.Helper()
	mb := s.mb
	parts := [][]byte{payload}
	count, size := mb.lay.Records(len(payload))
	require.Greater(t, count, upTo)
	b, err := mb.prod.TryClaimBatch(size)
	require.NoError(t, err)
	h := mailboxframe.Header{Key: s.key, Seq: s.seq, Count: uint32(count), BodyLen: uint32(len(payload)), Parts: 1}
	w := mailboxframe.NewBodyWriter(parts)
	_, err = mailboxframe.FillBatch(&b, &mb.prod.Log, mb.trailer.Tail, &mb.lay, typeID, &h, &w, upTo)
	require.NoError(t, err)
}

// A sender stops half-way through a fragmented message: the receiver
// delivers nothing of it, and once the liveness timeout has passed (an
// injected clock: no timing) it drops the message whole, counts it as
// torn, and the traffic behind it flows.
func TestSenderStopsHalfway(t *testing.T) {
	var now testClock
	mb := newMailbox(t, Config{Capacity: 16384, UnblockTimeout: time.Second, Clock: &now})
	checkClaimsEveryDrain(mb) // check on every idle drain (TestStallCheckPeriod covers the periods)
	live := mb.NewSender()
	require.NoError(t, live.Send(1, []byte("before")))
	sendHalf(t, mb.NewSender(), 2, pattern(9, 5000), 2)
	require.NoError(t, live.Send(3, []byte("after")))
	big := pattern(3, 4000)
	require.NoError(t, live.Send(4, big))
	require.NoError(t, mb.SendParts(5, []byte("p"), []byte("q")))

	require.Equal(t, []got{{1, []string{"before"}, false}}, collect(t, mb))
	now.Store(int64(999 * time.Millisecond))
	require.Empty(t, collect(t, mb), "blocked behind the open claim until the timeout")
	require.Zero(t, mb.Stats().Torn)
	now.Store(int64(1001 * time.Millisecond))
	out := collect(t, mb)
	out = append(out, collect(t, mb)...)
	require.Equal(t, []got{
		{3, []string{"after"}, false},
		{4, []string{string(big)}, true},
		{5, []string{"p", "q"}, true},
	}, out)
	st := mb.Stats()
	require.Equal(t, int64(1), st.Torn)
	require.Zero(t, st.Corrupt)
	require.Equal(t, int64(4), st.Delivered)
	require.Zero(t, st.Depth)
}

// A plain claim never committed is released and counted the same way;
// a receiver that only aborts is never mistaken for a stall.
func TestAbandonedClaim(t *testing.T) {
	var now testClock
	mb := newMailbox(t, Config{UnblockTimeout: time.Second, Clock: &now})
	checkClaimsEveryDrain(mb)
	_, err := mb.Claim(1, 100)
	require.NoError(t, err)
	require.NoError(t, mb.Send(2, []byte("x")))
	require.Empty(t, collect(t, mb))
	now.Store(int64(2 * time.Second))
	require.Empty(t, collect(t, mb))
	require.Equal(t, []got{{2, []string{"x"}, false}}, collect(t, mb))
	require.Equal(t, int64(1), mb.Stats().Torn)

	require.NoError(t, mb.Send(3, []byte("y")))
	for i := range 5 {
		now.Store(int64(time.Duration(i+3) * time.Second))
		n, err := mb.Drain(func(*Message) Action { return Abort }, 10)
		require.NoError(t, err)
		require.Zero(t, n)
	}
	require.Equal(t, int64(1), mb.Stats().Torn)
	require.Len(t, collect(t, mb), 1)
}

// An idle mailbox reads the clock only when it sees an open claim at the
// head (looked at once in claimCheckPeriod idle drains), or once in
// stallCheckPeriod idle drains (a claim never marked is all zeros), and
// once in claimCheckPeriod idle drains while a stall is timed.
func TestStallCheckPeriod(t *testing.T) {
	// The same rhythm whether the owner calls Drain or an Actor's DoWork,
	// whose idle cycles take the in-line quiet path (idlePoll) and call
	// Drain only on the cycles where the check runs.
	for _, viaActor := range []bool{false, true} {
		t.Run(map[bool]string{false: "Drain", true: "Actor.DoWork"}[viaActor], func(t *testing.T) {
			testStallCheckPeriod(t, viaActor)
		})
	}
}

func testStallCheckPeriod(t *testing.T, viaActor bool) {
	var now testClock
	var reads atomic.Int64
	mb := newMailbox(t, Config{UnblockTimeout: time.Second, Clock: &countingClock{&now, &reads}})
	actor, err := NewActor("stall", mb, func(*Message) Action { return Continue })
	require.NoError(t, err)
	idleDrain := func() {
		var n int
		var err error
		if viaActor {
			n, err = actor.DoWork()
		} else {
			n, err = mb.Drain(func(*Message) Action { return Continue }, 10)
		}
		require.NoError(t, err)
		require.Zero(t, n)
	}
	for range 3 * stallCheckPeriod {
		idleDrain() // empty: the tail equals the head, the clock is never read
	}
	require.Zero(t, reads.Load())

	// A claim never marked: the sender died right after moving the tail.
	c, err := mb.Claim(1, 8)
	require.NoError(t, err)
	require.NoError(t, mb.Send(2, []byte("next")))
	clear(RingOf(mb).Buffer()[:ringbuf.RecordSize(8)]) // undo the claim's marker
	_ = c
	for range stallCheckPeriod - 1 {
		idleDrain()
	}
	require.Zero(t, reads.Load())
	idleDrain()
	require.Equal(t, int64(1), reads.Load(), "timing starts")
	for range claimCheckPeriod - 1 {
		idleDrain()
	}
	require.Equal(t, int64(1), reads.Load(), "not on every drain while timing")
	idleDrain()
	require.Equal(t, int64(2), reads.Load(), "every claimCheckPeriod-th drain while timing")
	now.Store(int64(2 * time.Second))
	for range claimCheckPeriod - 1 {
		idleDrain()
	}
	require.Zero(t, mb.Stats().Torn)
	idleDrain()
	require.Equal(t, int64(1), mb.Stats().Torn)
	require.Equal(t, []got{{2, []string{"next"}, false}}, collect(t, mb))

	// An open (marked) claim starts the timing at the next look at the
	// head.
	reads.Store(0)
	_, err = mb.Claim(1, 8)
	require.NoError(t, err)
	idleDrain()
	require.Zero(t, reads.Load(), "not on every drain")
	drains := 1
	for reads.Load() == 0 {
		idleDrain()
		drains++
		require.LessOrEqual(t, drains, claimCheckPeriod)
	}
	require.Equal(t, int64(1), reads.Load())
	now.Store(int64(5 * time.Second))
	for range claimCheckPeriod {
		idleDrain()
	}
	require.Equal(t, int64(2), mb.Stats().Torn)
}

// The stress version: three live senders send plain, multipart and
// fragmented messages (waiting with SendContext while the ring is full)
// while a fourth dies half-way through a fragmented message. Every live
// message arrives exactly once and in order, the torn one never, and it is
// counted. The timeout is real but short; the only time limit is a hang
// guard.
func TestSenderStopsHalfwayConcurrent(t *testing.T) {
	mb := newMailbox(t, Config{Capacity: 16384, UnblockTimeout: 20 * time.Millisecond})
	const live, perSender = 3, 300
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	errs := make(chan error, live)
	start := make(chan struct{})
	for id := range live {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := mb.NewSender()
			<-start
			for seq := range perSender {
				kind, lens := stressShape(id, seq, mb)
				parts := stressParts(id, seq, lens)
				var err error
				if kind == kindMultipart {
					err = s.SendPartsContext(ctx, int32(1+id), parts...)
				} else {
					err = s.SendContext(ctx, int32(1+id), parts[0])
				}
				if err != nil {
					errs <- fmt.Errorf("sender %d seq %d: %w", id, seq, err)
					return
				}
			}
		}()
	}
	sendHalf(t, mb.NewSender(), 99, pattern(1, 5000), 1)
	close(start)

	next := make([]int, live)
	total := 0
	guard := time.Now().Add(60 * time.Second)
	for total < live*perSender {
		require.True(t, time.Now().Before(guard), "hang guard: %d of %d messages", total, live*perSender)
		n, err := mb.Drain(func(m *Message) Action {
			id := int(m.TypeID()) - 1
			require.NotEqual(t, int32(99), m.TypeID(), "torn message delivered")
			require.NoError(t, checkStress(m, id, next[id], mb))
			next[id]++
			return Continue
		}, 64)
		require.NoError(t, err)
		total += n
		if n == 0 {
			time.Sleep(50 * time.Microsecond)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, int64(1), mb.Stats().Torn)
	require.Zero(t, mb.Stats().Corrupt)
}

// rec is a raw ring record for the corruption tests.
type rec struct {
	typ     int32
	payload []byte
}

func framed(h mailboxframe.Header, body []byte) []byte {
	b := make([]byte, frameHeaderLength+len(body))
	mailboxframe.PutHeader(b, &h)
	copy(b[frameHeaderLength:], body)
	return b
}

// writeBatch writes records as one ring batch, as a (faulty) sender would.
func writeBatch(t testing.TB, r *ringbuf.ManyToOne, recs []rec) {
	t.Helper()
	size := 0
	for _, x := range recs {
		size += ringbuf.RecordSize(len(x.payload))
	}
	b, err := r.TryClaimBatch(size)
	require.NoError(t, err)
	for _, x := range recs {
		p, err := b.Append(x.typ, len(x.payload))
		require.NoError(t, err)
		copy(p, x.payload)
	}
	require.NoError(t, r.CommitBatch(b))
}

func lp(parts ...string) []byte {
	var b []byte
	for _, p := range parts {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(p)))
		b = append(b, p...)
	}
	return b
}

// Records with invalid framing are dropped whole and counted; a valid
// message after them is delivered; Drain reports ErrCorruptFrame.
func TestCorruptFrames(t *testing.T) {
	const F = framedFlag | 7
	hdr := func(index, count, bodyLen, parts uint32) mailboxframe.Header {
		return mailboxframe.Header{Key: 42, Seq: 1, Index: index, Count: count, BodyLen: bodyLen, Parts: parts}
	}
	frag := string(pattern(1, 8160))
	cases := []struct {
		name    string
		recs    []rec
		corrupt int64
	}{
		{"reserved type bits", []rec{{MaxTypeID + 1, []byte("x")}}, 1},
		{"framed flag without type", []rec{{framedFlag, framed(hdr(0, 1, 1, 1), []byte("x"))}}, 1},
		{"short framed record", []rec{{F, make([]byte, frameHeaderLength-1)}}, 1},
		{"stray fragment", []rec{{F, framed(hdr(1, 2, 2, 1), []byte("x"))}}, 1},
		{"zero count", []rec{{F, framed(hdr(0, 0, 1, 1), []byte("x"))}}, 1},
		{"count too large", []rec{{F, framed(hdr(0, 5, 1, 1), []byte("x"))}}, 1},
		{"zero parts", []rec{{F, framed(hdr(0, 1, 1, 0), []byte("x"))}}, 1},
		{"too many parts", []rec{{F, framed(hdr(0, 1, 1, defaultMaxParts+1), []byte("x"))}}, 1},
		{"body too long", []rec{{F, framed(hdr(0, 1, 40000, 1), []byte("x"))}}, 1},
		{"body length mismatch", []rec{{F, framed(hdr(0, 1, 2, 1), []byte("x"))}}, 1},
		{"part lengths too long", []rec{{F, framed(hdr(0, 1, 9, 2), append(lp("ab"), 9, 0, 0, 0, 'c'))}}, 1},
		{"part lengths too short", []rec{{F, framed(hdr(0, 1, 11, 2), append(lp("ab", "c"), 'z'))}}, 1},
		{"part count mismatch", []rec{{F, framed(hdr(0, 1, 10, 3), lp("ab", "c"))}}, 1},
		{"missing fragment", []rec{
			{F, framed(hdr(0, 3, 8161+8160, 1), []byte(frag))},
			{F, framed(hdr(1, 3, 8161+8160, 1), []byte(frag))},
		}, 2},
		{"other key", []rec{
			{F, framed(hdr(0, 2, 8161, 1), []byte(frag))},
			{F, framed(mailboxframe.Header{Key: 43, Seq: 1, Index: 1, Count: 2, BodyLen: 8161, Parts: 1}, []byte("x"))},
		}, 2},
		{"other type", []rec{
			{F, framed(hdr(0, 2, 8161, 1), []byte(frag))},
			{framedFlag | 8, framed(hdr(1, 2, 8161, 1), []byte("x"))},
		}, 2},
		{"index out of order", []rec{
			{F, framed(hdr(0, 3, 8162, 1), []byte(frag))},
			{F, framed(hdr(2, 3, 8162, 1), []byte("x"))},
			{F, framed(hdr(1, 3, 8162, 1), []byte("y"))},
		}, 3},
		{"fragments longer than body", []rec{
			{F, framed(hdr(0, 2, 8161, 1), []byte(frag))},
			{F, framed(hdr(1, 2, 8161, 1), []byte("xy"))},
		}, 2},
		{"fragments shorter than body", []rec{
			{F, framed(hdr(0, 2, 8163, 1), []byte(frag))},
			{F, framed(hdr(1, 2, 8163, 1), []byte("xy"))},
		}, 2},
		{"first fragment longer than body", []rec{
			{F, framed(hdr(0, 2, 10, 1), []byte(frag))},
			{F, framed(hdr(1, 2, 10, 1), []byte("xy"))},
		}, 2},
		{"plain record inside a message", []rec{
			{F, framed(hdr(0, 2, 8161, 1), []byte(frag))},
			{7, []byte("x")},
		}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mb := newMailbox(t, Config{})
			writeBatch(t, RingOf(mb), c.recs)
			require.NoError(t, mb.Send(1, []byte("ok")))
			var out []string
			n, err := mb.Drain(func(m *Message) Action {
				out = append(out, fmt.Sprint(m.TypeID(), string(m.Payload())))
				return Continue
			}, 10)
			require.ErrorIs(t, err, ErrCorruptFrame)
			if c.name == "plain record inside a message" {
				require.Equal(t, []string{"7x", "1ok"}, out) // the plain record is a message of its own
				require.Equal(t, 2, n)
			} else {
				require.Equal(t, []string{"1ok"}, out)
				require.Equal(t, 1, n)
			}
			require.Equal(t, c.corrupt, mb.Stats().Corrupt)
			require.Zero(t, mb.Stats().Depth)
		})
	}
}

// A sender that stalls holding a claim for longer than the unblock timeout
// (a process stopped with SIGSTOP, say) finds its claim released as torn;
// once it resumes, its late stores land in the space another sender has
// claimed since, a lap later. Without checksums that sender's message is
// delivered with bytes nobody sent and nothing is counted (the limit this
// test pins down); with Config.Checksum it is dropped, counted in
// Stats.Corrupt and reported (ErrCorruptFrame), and no message with the
// late bytes is delivered. The late sender's Commit fails either way.
func TestLateWriterAfterUnblock(t *testing.T) {
	for _, checksum := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "checksum"}[checksum], func(t *testing.T) {
			var now testClock
			mb := newMailbox(t, Config{Capacity: minCapacity, UnblockTimeout: time.Second, Clock: &now, Checksum: checksum})
			checkClaimsEveryDrain(mb) // check on every idle drain
			late, err := mb.Claim(1, 40)
			require.NoError(t, err)
			lateSpace := late.Payload() // where the stalled sender will write when it resumes

			var delivered [][]byte
			h := func(m *Message) Action {
				delivered = append(delivered, append([]byte(nil), m.Payload()...))
				return Continue
			}
			drain := func() error {
				_, err := mb.Drain(h, 100)
				return err
			}
			// The stall: the consumer times the claim, then releases it.
			require.NoError(t, drain())
			now.Add(int64(2 * time.Second))
			require.NoError(t, drain())
			require.Equal(t, int64(1), mb.Stats().Torn)

			// Other senders go round the ring until one claims the space
			// the late sender still holds a slice of: the record at index 0
			// of the next lap.
			good := bytes.Repeat([]byte{0x11}, 40)
			size := ringbuf.RecordSize(mb.lay.Over + len(good))
			wraps := func() bool { // the next send pads the end and lands at index 0
				rest := minCapacity - int(RingOf(mb).ProducerPosition()&int64(minCapacity-1))
				return rest < size
			}
			for i := 0; !wraps(); i++ {
				require.Less(t, i, 1000)
				require.NoError(t, mb.Send(2, good))
				require.NoError(t, drain())
			}
			require.NoError(t, mb.Send(3, good)) // the victim, at the late claim's index
			delivered = nil

			// The late sender resumes.
			copy(lateSpace, bytes.Repeat([]byte{0xEE}, 40))
			require.ErrorIs(t, late.Commit(), ErrClaim, "its claim was released: its commit fails")

			err = drain()
			if !checksum {
				// The limit Config.Checksum lifts (docs/ipc.md's failure
				// table): the victim is delivered with the late bytes, and
				// nothing says so.
				require.NoError(t, err)
				require.Equal(t, [][]byte{bytes.Repeat([]byte{0xEE}, 40)}, delivered)
				require.Zero(t, mb.Stats().Corrupt)
				return
			}
			require.ErrorIs(t, err, ErrCorruptFrame)
			require.Equal(t, int64(1), mb.Stats().Corrupt, "the damaged message is counted")
			require.Empty(t, delivered, "no message with the late sender's bytes")
		})
	}
}

// TestLateWriterOverHeadersRecovers: the late sender's stores land over
// the headers of records queued since (a length no sender writes, or one
// that reads as an open claim no sender makes). The mailbox does not stay
// wedged: once the damage has stood for UnblockTimeout it skips to the
// first record that chains to the tail it saw then, counts the stretch in
// Stats.Corrupt, and every message sent behind the damage arrives, in
// order; with checksums, nothing carrying the late bytes is delivered.
func TestLateWriterOverHeadersRecovers(t *testing.T) {
	for _, checksum := range []bool{false, true} {
		for _, fill := range []byte{0x55, 0xEE} { // a positive length past the ring; a negative one no claim has
			t.Run(fmt.Sprintf("checksum=%v/fill=%#x", checksum, fill), func(t *testing.T) {
				var now testClock
				mb := newMailbox(t, Config{Capacity: minCapacity, UnblockTimeout: time.Second, Clock: &now, Checksum: checksum})
				checkClaimsEveryDrain(mb)
				late, err := mb.Claim(1, 40)
				require.NoError(t, err)
				lateSpace := late.Payload()

				var delivered []byte
				var errs []error
				drain := func() {
					_, err := mb.Drain(func(m *Message) Action {
						delivered = append(delivered, m.Payload()[0])
						return Continue
					}, 100)
					if err != nil {
						errs = append(errs, err)
					}
				}
				drain()
				now.Add(int64(2 * time.Second))
				drain()
				require.Equal(t, int64(1), mb.Stats().Torn)

				// Round the ring until the next record lands where the late
				// claim was, then queue small records there: the late
				// sender's 40 bytes cover the headers of the second and third.
				small := make([]byte, 8)
				size := record.Size(mb.lay.Over + len(small))
				atZero := func() bool { // the next record lands at index 0
					rest := minCapacity - int(RingOf(mb).ProducerPosition()&int64(minCapacity-1))
					return rest == minCapacity || rest < size
				}
				for i := 0; !atZero(); i++ {
					require.Less(t, i, 1000)
					require.NoError(t, mb.Send(2, small))
					drain()
				}
				delivered, errs = nil, nil
				for i := range 8 {
					require.NoError(t, mb.Send(3, []byte{byte(10 + i), 0, 0, 0, 0, 0, 0, 0}))
				}
				copy(lateSpace, bytes.Repeat([]byte{fill}, 40))
				require.ErrorIs(t, late.Commit(), ErrClaim)

				for i := 0; len(delivered) < 5 || mb.Stats().Depth > 0; i++ {
					require.Less(t, i, 50, "the mailbox stays wedged: delivered %v, errors %v", delivered, errs)
					drain()
					now.Add(int64(700 * time.Millisecond))
				}
				require.NoError(t, mb.Send(4, []byte{99, 0, 0, 0, 0, 0, 0, 0}))
				drain()
				require.Equal(t, byte(99), delivered[len(delivered)-1], "later messages arrive")
				require.Positive(t, mb.Stats().Corrupt, "what was skipped is counted")
				require.ErrorIs(t, errors.Join(errs...), ErrCorruptFrame, "and reported")
				if !checksum && delivered[0] == fill {
					// The limit Config.Checksum lifts: the record whose
					// payload (not header) took the late bytes is delivered.
					delivered = delivered[1:]
				}
				for _, b := range delivered {
					require.NotEqual(t, fill, b, "a message carrying the late bytes")
				}
				// Whatever arrived, arrived in order: the records behind the
				// damage, then the later message.
				require.IsIncreasing(t, delivered)
			})
		}
	}
}
