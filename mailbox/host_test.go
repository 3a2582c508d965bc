package mailbox

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/ringbuf"
)

// sharedMem is memory two mailboxes can be placed in, as two processes
// mapping one file would be: a ring and the shared words.
type sharedMem struct{ ring, words []byte }

func newSharedMem(t testing.TB, capacity int) *sharedMem {
	t.Helper()
	ring, err := ringbuf.Allocate(capacity)
	require.NoError(t, err)
	return &sharedMem{ring: ring, words: atomicbuf.Make(WordsLength).Bytes()}
}

// memHost is a Host over a sharedMem, recording what the mailbox asks of
// it. dead, when set, is what CheckConsumer reports.
type memHost struct {
	mem      *sharedMem
	sendOnly bool
	attachOK error
	dead     atomic.Pointer[error]
	checks   atomic.Int64
	beats    []int64 // the nowMillis of each Beat (consumer goroutine only)
	forced   int
	beatErr  error
	m        *Mailbox
	detach   func()
}

func (h *memHost) Attach(m *Mailbox, detach func()) (Placement, error) {
	h.m, h.detach = m, detach
	return Placement{Ring: h.mem.ring, Words: h.mem.words, SendOnly: h.sendOnly}, h.attachOK
}

func (h *memHost) CheckConsumer() error {
	h.checks.Add(1)
	if e := h.dead.Load(); e != nil {
		return *e
	}
	return nil
}

func (h *memHost) Beat(now int64, force bool) error {
	h.beats = append(h.beats, now)
	if force {
		h.forced++
	}
	return h.beatErr
}

func (h *memHost) kill() {
	err := fmt.Errorf("%w: test consumer", ErrConsumerDead)
	h.dead.Store(&err)
}

// placed returns the consumer's and a sender's view of one mailbox in
// shared memory of capacity bytes.
func placed(t testing.TB, capacity int, cfg Config) (owner, sender *Mailbox, oh, sh *memHost) {
	t.Helper()
	mem := newSharedMem(t, capacity)
	oh, sh = &memHost{mem: mem}, &memHost{mem: mem, sendOnly: true}
	cfg.Host = oh
	owner = newMailbox(t, cfg)
	cfg.Host = sh
	sender = newMailbox(t, cfg)
	return owner, sender, oh, sh
}

// Two views of one mailbox (as two processes sharing a file would have):
// messages, the state word and the statistics are shared; a close by one
// is seen by the other's senders; the counters go on from the values the
// shared words hold.
func TestPlacedViewsShareEverything(t *testing.T) {
	mem := newSharedMem(t, defaultCapacity)
	w, err := wordsAt(mem.words)
	require.NoError(t, err)
	w.delivered.Store(100)
	owner := newMailbox(t, Config{Host: &memHost{mem: mem}})
	remote := newMailbox(t, Config{Host: &memHost{mem: mem, sendOnly: true}})
	require.True(t, remote.sendOnly)
	require.NoError(t, remote.Send(1, []byte("hello")))
	require.NoError(t, remote.SendParts(2, []byte("a"), pattern(1, 20000)))
	out := collect(t, owner)
	require.Len(t, out, 2)
	require.Equal(t, string(pattern(1, 20000)), out[1].parts[1])
	require.Equal(t, int64(102), remote.Stats().Delivered, "the consumer's counter, seen by the sender")
	_, _ = owner.Close(Drain)
	require.Equal(t, ErrClosed, remote.Send(1, nil))
	require.Equal(t, int64(1), owner.Stats().RefusedClosed, "the sender's counter, seen by the consumer")
}

// A sender's view refuses every consumer operation.
func TestSendOnlyViewRefusesTheConsumersOperations(t *testing.T) {
	_, sender, _, _ := placed(t, minCapacity, Config{})
	h := func(*Message) Action { return Continue }
	_, err := sender.Drain(h, 1)
	require.ErrorIs(t, err, ErrNotConsumer)
	_, err = sender.discardQueued()
	require.ErrorIs(t, err, ErrNotConsumer)
	_, err = sender.Close(Discard)
	require.ErrorIs(t, err, ErrNotConsumer)
	require.ErrorIs(t, sender.Heartbeat(), ErrNotConsumer)
	_, err = NewActor("a", sender, h)
	require.ErrorIs(t, err, ErrNotConsumer)
	_, err = sender.Close(Drain)
	require.NoError(t, err, "closing to senders is anyone's")
}

// Every path that can find the mailbox full asks the Host whether the
// consumer lives (the first refusal, then one in consumerCheckEvery), and
// reports a dead consumer as ErrConsumerDead instead of back-pressure:
// Send, SendParts, Claim, ClaimParts, the context variants and
// a Sender's methods alike.
func TestEverySendPathAsksTheHostWhenFull(t *testing.T) {
	type path struct {
		name string
		send func(m *Mailbox, s *Sender) error
	}
	p56 := make([]byte, 56)
	big := pattern(1, 5000)
	paths := []path{
		{"Send", func(m *Mailbox, _ *Sender) error { return m.Send(1, p56) }},
		{"Send fragmented", func(m *Mailbox, _ *Sender) error { return m.Send(1, big) }},
		{"SendParts", func(m *Mailbox, _ *Sender) error { return m.SendParts(1, p56, p56) }},
		{"Claim", func(m *Mailbox, _ *Sender) error {
			c, err := m.Claim(1, 56)
			if err == nil {
				err = c.Commit()
			}
			return err
		}},
		{"ClaimParts", func(m *Mailbox, _ *Sender) error {
			c, err := m.ClaimParts(1, 20, 20)
			if err == nil {
				err = c.Commit()
			}
			return err
		}},
		{"SendContext", func(m *Mailbox, _ *Sender) error { return m.SendContext(context.Background(), 1, p56) }},
		{"SendPartsContext", func(m *Mailbox, _ *Sender) error {
			return m.SendPartsContext(context.Background(), 1, p56, p56)
		}},
		{"Sender.Send", func(_ *Mailbox, s *Sender) error { return s.Send(1, p56) }},
		{"Sender.SendParts", func(_ *Mailbox, s *Sender) error { return s.SendParts(1, p56, p56) }},
		{"Sender.Claim", func(_ *Mailbox, s *Sender) error {
			c, err := s.Claim(1, 56)
			if err == nil {
				err = c.Commit()
			}
			return err
		}},
		{"Sender.ClaimParts", func(_ *Mailbox, s *Sender) error {
			c, err := s.ClaimParts(1, 20, 20)
			if err == nil {
				err = c.Commit()
			}
			return err
		}},
		{"Sender.SendContext", func(_ *Mailbox, s *Sender) error { return s.SendContext(context.Background(), 1, p56) }},
		{"Sender.SendPartsContext", func(_ *Mailbox, s *Sender) error {
			return s.SendPartsContext(context.Background(), 1, p56, p56)
		}},
	}
	for _, p := range paths {
		t.Run(p.name, func(t *testing.T) {
			_, sender, _, sh := placed(t, 16384, Config{})
			s := sender.NewSender()
			for sender.Send(1, p56) == nil {
			}
			require.Positive(t, sh.checks.Load(), "the filling send's refusal asked")
			sh.kill()
			var err error
			for range consumerCheckEvery {
				if err = p.send(sender, s); err != ErrBackPressured {
					break
				}
			}
			require.ErrorIs(t, err, ErrConsumerDead, "within %d refusals", consumerCheckEvery)
			require.NotErrorIs(t, err, ErrBackPressured)
		})
	}
}

// A live consumer's full mailbox stays ErrBackPressured, unwrapped, and
// the Host is asked on the first refusal and then once in
// consumerCheckEvery, not on every one.
func TestHostIsAskedOnceInSixteenRefusals(t *testing.T) {
	_, sender, _, sh := placed(t, minCapacity, Config{})
	p := make([]byte, 56)
	for sender.Send(1, p) == nil {
	}
	sh.checks.Store(0)
	for range 4 * consumerCheckEvery {
		require.Equal(t, ErrBackPressured, sender.Send(1, p))
	}
	require.Equal(t, int64(4), sh.checks.Load())
}

// Drain, and an Actor's duty cycle, run the Host's Beat every
// HeartbeatCycles drains, after storing the consumer heartbeat in the
// ring; a Beat error is returned by that drain, which drains nothing.
func TestHeartbeatEveryHeartbeatCycles(t *testing.T) {
	var now testClock
	now.Store(int64(5_000_000_000)) // 5000 ms
	owner, _, oh, _ := placed(t, minCapacity, Config{HeartbeatCycles: 3, Clock: &now})
	h := func(*Message) Action { return Continue }
	for range 7 {
		_, err := owner.Drain(h, 1)
		require.NoError(t, err)
	}
	require.Equal(t, []int64{5000, 5000}, oh.beats, "on the third and sixth drain")
	require.Equal(t, int64(5000), RingOf(owner).ConsumerHeartbeatTime())

	a, err := NewActor("a", owner, h)
	require.NoError(t, err)
	require.NoError(t, a.OnStart())
	require.Equal(t, 1, oh.forced, "OnStart forces one")
	now.Store(int64(6_000_000_000))
	for range 3 {
		_, err := a.DoWork()
		require.NoError(t, err)
	}
	require.Equal(t, int64(6000), RingOf(owner).ConsumerHeartbeatTime())
	require.Len(t, oh.beats, 4)

	oh.beatErr = errors.New("file truncated")
	for range 2 {
		_, err := owner.Drain(h, 1)
		require.NoError(t, err)
	}
	require.NoError(t, owner.Send(1, nil))
	n, err := owner.Drain(h, 1)
	require.ErrorIs(t, err, oh.beatErr)
	require.Zero(t, n, "the beat failed: nothing drained")
	require.Positive(t, owner.Stats().Depth)
}

// Once its Host detaches it, a mailbox touches none of the Host's memory:
// sends, claims, drains and closes return ErrClosed, its Actor ends, and
// Stats keeps the last statistics.
func TestDetachedMailboxRefusesEverything(t *testing.T) {
	owner, sender, oh, sh := placed(t, minCapacity, Config{})
	require.NoError(t, sender.Send(1, []byte("x")))
	require.NoError(t, sender.Send(2, []byte("y")))
	n, err := owner.Drain(func(*Message) Action { return Break }, 10)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	before := owner.Stats()
	require.Positive(t, before.Depth)
	a, err := NewActor("a", owner, func(*Message) Action { return Continue })
	require.NoError(t, err)

	oh.detach()
	sh.detach()
	oh.detach() // idempotent
	clear(oh.mem.ring)
	for i := range oh.mem.words {
		oh.mem.words[i] = 0xff // whatever the memory holds now, nobody reads it
	}
	for _, m := range []*Mailbox{owner, sender} {
		require.Equal(t, ErrClosed, m.Send(1, nil))
		require.Equal(t, ErrClosed, m.SendParts(1, nil, nil))
		_, err := m.Claim(1, 8)
		require.Equal(t, ErrClosed, err)
		require.Equal(t, ErrClosed, m.NewSender().Send(1, nil))
		require.ErrorIs(t, m.Err(), ErrClosed)
	}
	_, err = owner.Drain(func(*Message) Action { return Continue }, 10)
	require.Equal(t, ErrClosed, err)
	_, err = owner.Close(Drain)
	require.Equal(t, ErrClosed, err)
	st := owner.Stats()
	require.Equal(t, before.Depth, st.Depth)
	require.Equal(t, before.Delivered, st.Delivered)
	require.True(t, st.Closed)
	_, err = a.DoWork()
	require.ErrorIs(t, err, ErrClosed, "the first duty cycle after the detach ends the actor")
	terminate, _ := agent.IsTermination(err)
	require.True(t, terminate)
	require.Equal(t, before.RefusedClosed, owner.Stats().RefusedClosed, "sends after the detach are not the mailbox's refusals")
	require.NoError(t, a.OnClose(), "nothing left to close")
}

// A state word in shared memory that holds no state is corruption, not a
// close: sends, Close and Drain report it (matching ErrCorrupt), and the
// word is left as it is.
func TestCorruptStateWord(t *testing.T) {
	owner, sender, _, _ := placed(t, minCapacity, Config{})
	require.NoError(t, sender.Send(1, nil))
	owner.w.state.Store(7)
	err := sender.Send(1, nil)
	require.ErrorIs(t, err, ErrCorrupt)
	require.Contains(t, err.Error(), "state word 7")
	require.NotContains(t, err.Error(), "ring", "a bad state word is not a corrupt ring")
	_, err = owner.Close(Discard)
	require.ErrorIs(t, err, ErrCorrupt)
	_, err = owner.Drain(func(*Message) Action { return Continue }, 10)
	require.ErrorIs(t, err, ErrCorrupt)
	require.Equal(t, int64(7), owner.w.state.Load())
	require.Positive(t, owner.Stats().Depth, "nothing drained under a corrupt word")
	owner.w.state.Store(stateDetached) // in shared memory, as corrupt as any other
	require.ErrorIs(t, sender.Send(1, nil), ErrCorrupt)
}

// New refuses placements it cannot use.
func TestPlacementValidation(t *testing.T) {
	mem := newSharedMem(t, minCapacity)
	for name, h := range map[string]*memHost{
		"short words":   {mem: &sharedMem{ring: mem.ring, words: mem.words[:WordsLength-8]}},
		"small ring":    {mem: &sharedMem{ring: newSharedMem(t, 256).ring, words: mem.words}},
		"attach failed": {mem: mem, attachOK: errors.New("no file")},
	} {
		_, err := New(Config{Host: h})
		require.Error(t, err, name)
	}
	_, err := New(Config{Host: &memHost{mem: &sharedMem{ring: mem.ring, words: atomicbuf.Make(WordsLength + 8).Bytes()[4:]}}})
	require.ErrorIs(t, err, ErrArgument, "misaligned words")
}

// Err says what a send would be refused with, without counting a refusal.
func TestErrReportsTheState(t *testing.T) {
	owner, sender, oh, _ := placed(t, minCapacity, Config{})
	require.NoError(t, sender.Err())
	_, err := owner.Close(Drain)
	require.NoError(t, err)
	require.Equal(t, ErrClosed, sender.Err())
	owner.w.state.Store(-5)
	require.ErrorIs(t, sender.Err(), ErrCorrupt)
	require.Zero(t, owner.Stats().RefusedClosed)
	owner.w.state.Store(stateDrain)
	oh.detach()
	require.Equal(t, ErrClosed, owner.Err())
}

// A sender's view asks its Host about the consumer once per eighth of the
// ring its sends cross, from every send path; the consumer's view and a
// heap mailbox never do. Once the Host has raised the state word to
// consumer dead, every send is refused with the Host's account, and the
// messages queued, of every form, are counted in Stats.Stranded.
func TestCrossingsAskTheHostAndStrandedCounts(t *testing.T) {
	for _, checksum := range []bool{false, true} {
		t.Run(fmt.Sprintf("checksum=%t", checksum), func(t *testing.T) {
			const capacity = 4096
			owner, sender, oh, sh := placed(t, capacity, Config{Checksum: checksum})
			small := make([]byte, 40)
			size := sender.lay.Over + len(small) + 8 // one record's bytes, header included
			size = (size + 7) &^ 7
			n := 2 * capacity / size // two laps of the ring, drained as it goes
			for i := range n {
				require.NoError(t, sender.Send(1, small))
				if i%8 == 7 {
					_, err := owner.Drain(func(*Message) Action { return Continue }, 100)
					require.NoError(t, err)
				}
			}
			require.Equal(t, int64(2*probeParts), sh.checks.Load(), "once per eighth, over two laps")
			for range n {
				require.NoError(t, owner.Send(1, small))
				_, err := owner.Drain(func(*Message) Action { return Continue }, 100)
				require.NoError(t, err)
			}
			require.Zero(t, oh.checks.Load(), "the consumer's own view never asks")

			// Queue one message of every form, then the consumer dies.
			require.NoError(t, sender.Send(1, small))
			require.NoError(t, sender.SendParts(1, small, small))
			require.NoError(t, sender.Send(1, make([]byte, sender.MaxClaimLength()+100))) // fragmented
			c, err := sender.Claim(1, 8)
			require.NoError(t, err)
			require.NoError(t, c.Commit())
			pc, err := sender.ClaimParts(1, 4, 4)
			require.NoError(t, err)
			require.NoError(t, pc.Abort()) // padding: not a message
			s := sender.NewSender()
			require.NoError(t, s.SendParts(1, small, small))
			require.Zero(t, sender.Stats().Stranded, "the consumer lives")

			sh.kill()
			sender.w.state.Store(stateConsumerDead) // what package ipc's Host does on proof
			require.Equal(t, int64(5), sender.Stats().Stranded)
			require.Equal(t, int64(5), owner.Stats().Stranded, "the same ring, seen from any view")
			bp := sender.Stats().BackPressured
			for _, err := range []error{
				sender.Send(1, small), sender.SendParts(1, small, small), s.Send(1, small),
				sender.SendContext(context.Background(), 1, small), sender.Err(),
			} {
				require.ErrorIs(t, err, ErrConsumerDead)
				require.Equal(t, *sh.dead.Load(), err, "the Host's account")
			}
			_, err = sender.Claim(1, 8)
			require.ErrorIs(t, err, ErrConsumerDead)
			require.Equal(t, bp+5, sender.Stats().BackPressured, "each refused send counted")
			require.Equal(t, int64(5), sender.Stats().Stranded, "nothing more was queued")
			require.True(t, sender.Stats().Closed)
			sh.detach()
			require.Equal(t, int64(5), sender.Stats().Stranded, "kept once detached")
		})
	}
	heap := newMailbox(t, Config{Capacity: 4096})
	require.Equal(t, uint(math.MaxUint), heap.probeSpan, "a heap mailbox never asks")
	for index := 0; index < 1<<16; index += 8 {
		for _, size := range []int{8, 16, 64, 4096} {
			require.NotEqual(t, uint(math.MaxUint), holdsBoundary(index, size))
			want := index%512 == 0 || index/512 != (index+size-1)/512
			require.Equal(t, want, holdsBoundary(index, size) >= 512, "index %d, size %d", index, size)
		}
	}
}
