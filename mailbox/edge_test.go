package mailbox

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/buildtags"
)

// TestStressSmallRingWithPanics: TestStress's senders (plain,
// claims, multipart, fragmented, ...Context) into the smallest rings, where
// the largest message is a batch of half the ring and messages meet the
// wrap constantly, drained with small random limits and every action,
// panics included (recovered): every message is handed to the handler
// exactly once, whole and in order per sender (an aborted one again, a
// panicking one never again), and Stats.Delivered counts each consumed
// message once.
func TestStressSmallRingWithPanics(t *testing.T) {
	for _, capacity := range []int{minCapacity, 2048} {
		t.Run(fmt.Sprint(capacity), func(t *testing.T) {
			testEdgeStress(t, capacity)
		})
	}
}

func testEdgeStress(t *testing.T, capacity int) {
	perSender := 3000
	if buildtags.Race {
		perSender = 600
	}
	mb := newMailbox(t, Config{Capacity: capacity, UnblockTimeout: time.Minute})
	const senders = 3
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stop := startStressSenders(ctx, cancel, mb, senders, perSender, 11)
	next := make([]int, senders)
	var aborted [senders]int
	for i := range aborted {
		aborted[i] = -1
	}
	rng := rand.New(rand.NewPCG(5, 1))
	consumed := 0
	var failure error
	aborts, panics := 0, 0
	for consumed < senders*perSender && failure == nil && ctx.Err() == nil {
		func() {
			defer func() { _ = recover() }()
			n, err := mb.Drain(func(m *Message) Action {
				id, err := nextStress(m, next, mb)
				if err != nil {
					failure = err
					return Break
				}
				switch r := rng.IntN(24); {
				case r == 0 && aborted[id] != next[id]:
					aborted[id] = next[id]
					aborts++
					return Abort
				case r == 1:
					next[id]++
					consumed++
					return Break
				case r == 2:
					next[id]++
					consumed++
					panics++
					panic("boom")
				case r < 6:
					next[id]++
					consumed++
					return Commit
				}
				next[id]++
				consumed++
				return Continue
			}, 1+rng.IntN(8))
			if err != nil {
				failure = err
			}
			if n == 0 {
				runtime.Gosched()
			}
		}()
	}
	stop(t, failure)
	for id := range senders {
		require.Equal(t, perSender, next[id])
	}
	n, err := mb.Drain(func(*Message) Action { return Continue }, 10)
	require.NoError(t, err)
	require.Zero(t, n)
	st := mb.Stats()
	require.Equal(t, int64(senders*perSender), st.Delivered)
	require.Zero(t, st.Torn)
	require.Zero(t, st.Corrupt)
	require.Zero(t, st.Depth)
	require.Positive(t, aborts)
	require.Positive(t, panics)
}

// Edge cases not covered by the existing tests (checked: mailbox_test.go,
// misuse_test.go, torn_test.go, close_review_test.go, stress_test.go,
// frame_test.go, fuzz_test.go, actor_test.go).

// TestMaxPartsAtMaxMessageSize: the largest number of parts a
// message can carry (every part empty, the body nothing but length
// prefixes: MaxMessageSize/partLengthPrefix parts, fragmented over the
// maximum number of records, prefixes straddling record boundaries) is
// delivered whole; one more part, or one more byte, is ErrTooLong; above
// MaxParts it is ErrArgument.
func TestMaxPartsAtMaxMessageSize(t *testing.T) {
	mb := newMailbox(t, Config{MaxParts: 10000})
	n := mb.MaxMessageSize() / partLengthPrefix
	require.Zero(t, mb.MaxMessageSize()%partLengthPrefix)
	parts := make([][]byte, n)
	require.NoError(t, mb.SendParts(3, parts...))
	s := mb.NewSender()
	parts[n-1] = []byte("z")
	parts[0] = []byte("a")
	require.Equal(t, ErrTooLong, s.SendParts(3, parts...), "one byte above MaxMessageSize")
	parts[n-1] = nil
	require.Equal(t, ErrTooLong, s.SendParts(3, append(parts, nil)...), "one part above MaxMessageSize")
	parts = parts[:n-1] // room for "a"'s byte: n-1 parts, body MaxMessageSize-3
	require.NoError(t, s.SendParts(4, parts...))
	out := collect(t, mb)
	require.Len(t, out, 2)
	require.Len(t, out[0].parts, n)
	for _, p := range out[0].parts {
		require.Empty(t, p)
	}
	require.True(t, out[0].framed)
	require.Len(t, out[1].parts, n-1)
	require.Equal(t, "a", out[1].parts[0])
	st := mb.Stats()
	require.Equal(t, int64(2), st.Delivered)
	require.Zero(t, st.Corrupt)
	require.Zero(t, st.Depth)

	def := newMailbox(t, Config{})
	require.ErrorIs(t, def.SendParts(3, make([][]byte, defaultMaxParts+1)...), ErrArgument)
	require.NoError(t, def.SendParts(3, make([][]byte, defaultMaxParts)...))
	out = collect(t, def)
	require.Len(t, out, 1)
	require.Len(t, out[0].parts, defaultMaxParts)
}

// TestFragmentedAtTheWrap: a fragmented message that does not fit
// before the end of the ring is published whole at its start (the end is
// padding), between two other senders' plain messages. Abort there leaves
// all of it; the next Drain, limit 1, delivers it once and whole; Break
// consumes all of its records.
func TestFragmentedAtTheWrap(t *testing.T) {
	mb := newMailbox(t, Config{Capacity: 4096}) // records of 512 bytes, batches of 2048
	for range 7 {
		require.NoError(t, mb.Send(1, make([]byte, 392))) // 400-byte records
	}
	require.NoError(t, mb.Send(1, make([]byte, 192)))
	require.Len(t, collect(t, mb), 8)
	require.Equal(t, int64(3000), RingOf(mb).ConsumerPosition())

	a, b := mb.NewSender(), mb.NewSender()
	big := pattern(5, 1500) // 4 records, 1664 bytes: more than the 1080 left
	require.NoError(t, a.Send(1, []byte("A")))
	require.NoError(t, b.Send(2, big))
	require.NoError(t, a.Send(1, []byte("B")))
	require.Equal(t, int64(4096+1664+16), RingOf(mb).ProducerPosition(), "the message went to the ring's start")

	var seen []string
	aborts := 0
	h := func(act Action) Handler {
		return func(m *Message) Action {
			if m.TypeID() == 2 {
				require.Equal(t, big, m.Payload())
				require.Equal(t, b.key, m.key)
				if aborts == 0 {
					aborts++
					return Abort
				}
			}
			seen = append(seen, fmt.Sprint(m.TypeID(), ":", len(m.Payload())))
			return act
		}
	}
	n, err := mb.Drain(h(Continue), 10)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, int64(4096), RingOf(mb).ConsumerPosition(), "stopped at the message, at the ring's start")
	n, err = mb.Drain(h(Break), 1)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, int64(4096+1664), RingOf(mb).ConsumerPosition(), "all four records consumed")
	n, err = mb.Drain(h(Continue), 10)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, []string{"1:1", "2:1500", "1:1"}, seen)
	st := mb.Stats()
	require.Equal(t, int64(11), st.Delivered)
	require.Zero(t, st.Corrupt)
	require.Zero(t, st.Depth)
}

// TestTornBatchThenCloseDiscard: a sender dies half-way through a
// fragmented message; Close(Discard) discards what is before its claim and
// stops there; once the liveness timeout has passed, a Drain (discarding)
// releases the claim as one torn message and discards what was behind it:
// nothing delivered, everything counted once.
func TestTornBatchThenCloseDiscard(t *testing.T) {
	var now testClock
	mb := newMailbox(t, Config{Capacity: 16384, UnblockTimeout: time.Second, Clock: &now})
	checkClaimsEveryDrain(mb)
	require.NoError(t, mb.Send(1, []byte("before")))
	sendHalf(t, mb.NewSender(), 2, pattern(9, 5000), 2)
	require.NoError(t, mb.Send(3, []byte("after")))
	require.NoError(t, mb.SendParts(4, pattern(3, 4000), []byte("x")))
	n, err := mb.Close(Discard)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Positive(t, mb.Stats().Depth, "stopped at the open claim")
	never := func(*Message) Action { t.Fatal("delivered after Close(Discard)"); return Continue }
	total := 0
	for range 3 {
		n, err := mb.Drain(never, 10)
		require.NoError(t, err)
		total += n
	}
	require.Zero(t, total, "nothing before the timeout")
	now.Store(int64(2 * time.Second))
	for range 3 {
		n, err := mb.Drain(never, 10)
		require.NoError(t, err)
		total += n
	}
	require.Equal(t, 2, total)
	st := mb.Stats()
	require.Equal(t, int64(1), st.Torn)
	require.Equal(t, int64(3), st.Discarded)
	require.Zero(t, st.Delivered)
	require.Zero(t, st.Corrupt)
	require.Zero(t, st.Depth)
}

// TestSendContextCancelFragmented: a fragmented message waiting in
// SendContext (Mailbox and Sender) while the ring is full, whose context
// ends, leaves nothing in the ring: no record of it is ever delivered.
func TestSendContextCancelFragmented(t *testing.T) {
	mb := newMailbox(t, Config{Capacity: 4096})
	sent := 0
	for mb.Send(1, make([]byte, 100)) == nil {
		sent++
	}
	bp := mb.Stats().BackPressured
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Millisecond)
	defer cancel()
	require.Equal(t, context.DeadlineExceeded, mb.SendContext(ctx, 2, pattern(1, 1500)))
	s := mb.NewSender()
	require.Equal(t, context.DeadlineExceeded, s.SendPartsContext(ctx, 2, pattern(2, 900), pattern(3, 900)))
	require.Equal(t, bp+2, mb.Stats().BackPressured)
	out := collect(t, mb)
	require.Len(t, out, sent)
	for _, g := range out {
		require.Equal(t, int32(1), g.typeID)
	}
	st := mb.Stats()
	require.Zero(t, st.Depth)
	require.Zero(t, st.Corrupt)
	// The sender goes on with its next message, intact.
	require.NoError(t, s.SendParts(3, pattern(4, 900), pattern(5, 900)))
	out = collect(t, mb)
	require.Equal(t, []got{{3, []string{string(pattern(4, 900)), string(pattern(5, 900))}, true}}, out)
}

// MaxDepth is a backlog the mailbox held at one moment, never more than
// its capacity, even when one Drain reads the ring several times while
// senders (here the handler itself) refill what it releases.
func TestMaxDepthNeverExceedsCapacity(t *testing.T) {
	for _, limit := range []int{40, 1 << 20} {
		mb := newMailbox(t, Config{Capacity: minCapacity})
		p := make([]byte, 56) // 64-byte records
		for mb.Send(1, p) == nil {
		}
		seen := 0
		_, err := mb.Drain(func(*Message) Action {
			seen++
			if seen >= 40 {
				return Break
			}
			if seen > 1 { // the previous message's Commit released its space
				require.NoError(t, mb.Send(1, p), "the handler refills what Commit released")
			}
			return Commit
		}, limit)
		require.NoError(t, err)
		require.Equal(t, 40, seen, "the drain went round the ring more than twice")
		st := mb.Stats()
		require.LessOrEqual(t, st.MaxDepth, int64(st.Capacity), "limit %d", limit)
		require.Positive(t, st.MaxDepth)
	}
}
