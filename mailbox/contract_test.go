package mailbox_test

// The mailbox contract, run against every placement of a mailbox: on the
// heap (mailbox.New) and in a shared file (ipc.CreateMailbox for the
// consumer, ipc.OpenMailbox for a sender's view, as another process would
// have it). Everything here is written against *mailbox.Mailbox alone: an
// agent does not know where its mailbox's bytes live.

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/internal/buildtags"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/message"
)

// placement makes a mailbox: the consumer's view and a sender's view
// (the same value on the heap).
type placement struct {
	name string
	make func(t *testing.T, cfg mailbox.Config) (consumer, sender *mailbox.Mailbox)
}

var placements = []placement{
	{"heap", heap},
	{"file", file},
	{"heap+checksum", checksummed(heap)},
	{"file+checksum", checksummed(file)},
}

func heap(t *testing.T, cfg mailbox.Config) (*mailbox.Mailbox, *mailbox.Mailbox) {
	mb, err := mailbox.New(cfg)
	require.NoError(t, err)
	return mb, mb
}

// checksummed is a placement whose mailboxes seal every record
// (Config.Checksum).
func checksummed(make func(*testing.T, mailbox.Config) (*mailbox.Mailbox, *mailbox.Mailbox)) func(*testing.T, mailbox.Config) (*mailbox.Mailbox, *mailbox.Mailbox) {
	return func(t *testing.T, cfg mailbox.Config) (*mailbox.Mailbox, *mailbox.Mailbox) {
		cfg.Checksum = true
		return make(t, cfg)
	}
}

// file is a mailbox in a shared file: the consumer's view, and a sender's
// opened as another process would.
func file(t *testing.T, cfg mailbox.Config) (*mailbox.Mailbox, *mailbox.Mailbox) {
	dir := t.TempDir()
	consumer, cf, err := ipc.CreateMailbox(dir, "inbox", cfg)
	require.NoError(t, err)
	sender, sf, err := ipc.OpenMailbox(context.Background(), cf.File.Path())
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, sf.Close())
		if err := cf.Close(); err != nil {
			require.ErrorIs(t, err, mailbox.ErrNotDrained, "the only error a test may leave")
		}
	})
	return consumer, sender
}

// eachPlacement runs f once per placement, as a subtest.
func eachPlacement(t *testing.T, f func(t *testing.T, p placement)) {
	for _, p := range placements {
		t.Run(p.name, func(t *testing.T) { f(t, p) })
	}
}

// received is a delivered message, copied out of the handler.
type received struct {
	typeID int32
	parts  []string
}

func drainAll(t *testing.T, mb *mailbox.Mailbox) []received {
	t.Helper()
	var out []received
	for range 1000 {
		n, err := mb.Drain(func(m *mailbox.Message) mailbox.Action {
			r := received{typeID: m.TypeID()}
			for _, p := range m.Parts() {
				r.parts = append(r.parts, string(p))
			}
			out = append(out, r)
			return mailbox.Continue
		}, 100)
		require.NoError(t, err)
		if n == 0 {
			return out
		}
	}
	t.Fatal("the drain did not settle")
	return nil
}

func bytesOf(seed, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seed*131 + i*7 + i>>8)
	}
	return b
}

// Plain, multipart, fragmented, claimed and typed messages arrive whole,
// in order, with their type ids, from the sender's view to the consumer's.
func TestContractEveryKindOfMessage(t *testing.T) {
	eachPlacement(t, func(t *testing.T, p placement) {
		consumer, sender := p.make(t, mailbox.Config{Capacity: 16384})
		big := bytesOf(3, sender.MaxClaimLength()*3)
		require.NoError(t, sender.Send(1, []byte("plain")))
		require.NoError(t, sender.SendParts(2, []byte("a"), nil, []byte("ccc")))
		require.NoError(t, sender.Send(3, big))
		c, err := sender.Claim(4, 5)
		require.NoError(t, err)
		copy(c.Payload(), "claim")
		require.NoError(t, c.Commit())
		pc, err := sender.ClaimParts(5, 2, 3)
		require.NoError(t, err)
		copy(pc.Part(0), "xy")
		copy(pc.Part(1), "zzz")
		require.NoError(t, pc.Commit())
		require.NoError(t, points.Send(sender, &point{X: 7, Y: -1}))
		aborted, err := sender.Claim(9, 8)
		require.NoError(t, err)
		require.NoError(t, aborted.Abort())

		got := drainAll(t, consumer)
		require.Equal(t, []received{
			{1, []string{"plain"}},
			{2, []string{"a", "", "ccc"}},
			{3, []string{string(big)}},
			{4, []string{"claim"}},
			{5, []string{"xy", "zzz"}},
			{pointType, []string{string(point{X: 7, Y: -1}.bytes())}},
		}, got)
		st := consumer.Stats()
		require.Equal(t, int64(6), st.Delivered)
		require.Equal(t, int64(6), sender.Stats().Delivered, "both views see the same statistics")
	})
}

// A full mailbox refuses with ErrBackPressured (unwrapped, counted), sends
// nothing, and accepts again once the consumer drains; SendContext waits
// for room, and gives up when its context ends.
func TestContractBackPressure(t *testing.T) {
	eachPlacement(t, func(t *testing.T, p placement) {
		consumer, sender := p.make(t, mailbox.Config{Capacity: 1024}) // the smallest ring a mailbox accepts
		payload := make([]byte, 56)
		sent := 0
		for sender.Send(1, payload) == nil {
			sent++
		}
		require.Equal(t, mailbox.ErrBackPressured, sender.Send(1, payload))
		require.Positive(t, consumer.Stats().BackPressured)

		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		require.Equal(t, context.DeadlineExceeded, sender.SendContext(ctx, 1, payload))

		done := make(chan error, 1)
		go func() { done <- sender.SendContext(context.Background(), 2, []byte("waited")) }()
		var got []received
		require.Eventually(t, func() bool {
			got = append(got, drainAll(t, consumer)...)
			return len(got) == sent+1
		}, 10*time.Second, time.Millisecond)
		require.NoError(t, <-done)
		require.Equal(t, received{2, []string{"waited"}}, got[sent])
	})
}

// Close refuses new sends everywhere with ErrClosed (counted); Close(Drain)
// leaves what is queued to be delivered, Close(Discard) discards and
// counts it.
func TestContractClose(t *testing.T) {
	eachPlacement(t, func(t *testing.T, p placement) {
		consumer, sender := p.make(t, mailbox.Config{})
		require.NoError(t, sender.Send(1, []byte("queued")))
		n, err := sender.Close(mailbox.Drain) // any view may close to senders
		require.NoError(t, err)
		require.Zero(t, n)
		require.ErrorIs(t, consumer.Err(), mailbox.ErrClosed)
		require.Equal(t, mailbox.ErrClosed, sender.Send(1, nil))
		require.Equal(t, mailbox.ErrClosed, consumer.Send(1, nil))
		_, err = sender.Claim(1, 1)
		require.Equal(t, mailbox.ErrClosed, err)
		require.Equal(t, int64(3), consumer.Stats().RefusedClosed)
		require.Equal(t, []received{{1, []string{"queued"}}}, drainAll(t, consumer))

		consumer2, sender2 := p.make(t, mailbox.Config{})
		for i := range 3 {
			require.NoError(t, sender2.Send(int32(i+1), nil))
		}
		n, err = consumer2.Close(mailbox.Discard)
		require.NoError(t, err)
		require.Equal(t, 3, n)
		require.Equal(t, int64(3), sender2.Stats().Discarded)
	})
}

// An agent written against *mailbox.Mailbox runs unchanged on both
// placements: an Actor drains into its handler from its duty cycle, a
// handler's Abort leaves the message for the next cycle, OnClose closes and
// delivers the rest.
func TestContractActor(t *testing.T) {
	eachPlacement(t, func(t *testing.T, p placement) {
		consumer, sender := p.make(t, mailbox.Config{})
		var got []int32
		refuse := true
		a, err := mailbox.NewActor("worker", consumer, func(m *mailbox.Message) mailbox.Action {
			if m.TypeID() == 2 && refuse {
				refuse = false
				return mailbox.Abort
			}
			got = append(got, m.TypeID())
			return mailbox.Continue
		}, mailbox.WithDrainLimit(2))
		require.NoError(t, err)
		inv, err := agent.NewInvoker(a)
		require.NoError(t, err)
		require.NoError(t, inv.Start())
		for i := range 5 {
			require.NoError(t, sender.Send(int32(i+1), nil))
		}
		var counts []int
		for range 3 {
			n, err := inv.Invoke()
			require.NoError(t, err)
			counts = append(counts, n)
		}
		require.Equal(t, []int{1, 2, 2}, counts, "the aborted message waits for the next cycle")
		require.NoError(t, sender.Send(6, nil))
		require.NoError(t, inv.Close())
		require.Equal(t, []int32{1, 2, 3, 4, 5, 6}, got)
		require.ErrorIs(t, consumer.Err(), mailbox.ErrClosed)
		require.Equal(t, mailbox.ErrClosed, sender.Send(7, nil))
	})
}

// A Send that returned nil happens before the handler call that delivers
// its message: what the sender wrote before Send (here, outside the
// message, in memory the race detector watches) the handler reads. Run
// under -race, a missing edge is a reported race. Not for a mailbox in a
// shared mapping under -race: the race detector records no edge for
// atomics on memory outside the Go heap, so it would report one missing.
func TestContractSendHappensBeforeDelivery(t *testing.T) {
	eachPlacement(t, func(t *testing.T, p placement) {
		if strings.HasPrefix(p.name, "file") && buildtags.Race {
			t.Skip("the race detector does not see synchronisation through a shared mapping")
		}
		consumer, sender := p.make(t, mailbox.Config{})
		const n = 2000
		notes := make([]int, n) // written by the sender, read by the handler, never synchronised otherwise
		done := make(chan error, 1)
		go func() {
			var seq [8]byte
			for i := range n {
				notes[i] = i * 3
				binary.LittleEndian.PutUint64(seq[:], uint64(i))
				if err := sender.SendContext(context.Background(), 1, seq[:]); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
		next := 0
		deadline := time.Now().Add(time.Minute)
		for next < n && time.Now().Before(deadline) {
			_, err := consumer.Drain(func(m *mailbox.Message) mailbox.Action {
				i := int(binary.LittleEndian.Uint64(m.Payload()))
				if i != next || notes[i] != i*3 {
					panic(fmt.Sprintf("message %d (want %d) saw note %d", i, next, notes[i]))
				}
				next++
				return mailbox.Continue
			}, 64)
			require.NoError(t, err)
		}
		require.NoError(t, <-done)
		require.Equal(t, n, next)
	})
}

// Several goroutines send every kind of message at once through their own
// Sender and through the Mailbox's methods: each message arrives exactly
// once, whole, and each goroutine's messages in the order it sent them.
func TestContractConcurrentSendersExactlyOnceInOrder(t *testing.T) {
	eachPlacement(t, func(t *testing.T, p placement) {
		consumer, sender := p.make(t, mailbox.Config{Capacity: 16384})
		const senders, each = 4, 400
		var wg sync.WaitGroup
		errs := make(chan error, senders)
		for id := range senders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := sender.NewSender()
				for seq := range each {
					var hdr [8]byte
					binary.LittleEndian.PutUint32(hdr[:], uint32(id))
					binary.LittleEndian.PutUint32(hdr[4:], uint32(seq))
					var err error
					ctx := context.Background()
					switch seq % 3 {
					case 0:
						err = s.SendContext(ctx, 1, hdr[:])
					case 1:
						err = sender.SendPartsContext(ctx, 2, hdr[:], bytesOf(seq, seq%50))
					default:
						err = s.SendContext(ctx, 3, append(hdr[:], bytesOf(seq, sender.MaxClaimLength()+seq)...))
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		stop := make(chan struct{})
		go func() { wg.Wait(); close(stop) }()
		next := make([]int, senders)
		var bad error
		h := func(m *mailbox.Message) mailbox.Action {
			id, seq := int(binary.LittleEndian.Uint32(m.Payload())), int(binary.LittleEndian.Uint32(m.Payload()[4:]))
			switch {
			case id >= senders:
				bad = fmt.Errorf("sender %d", id)
			case seq != next[id]:
				bad = fmt.Errorf("sender %d: seq %d, want %d", id, seq, next[id])
			case m.TypeID() == 2 && (m.NumParts() != 2 || string(m.Part(1)) != string(bytesOf(seq, seq%50))):
				bad = fmt.Errorf("sender %d seq %d: multipart message corrupt", id, seq)
			case m.TypeID() == 3 && string(m.Payload()[8:]) != string(bytesOf(seq, sender.MaxClaimLength()+seq)):
				bad = fmt.Errorf("sender %d seq %d: fragmented message corrupt", id, seq)
			}
			next[id]++
			return mailbox.Continue
		}
		total := 0
		for stopped := false; total < senders*each && bad == nil; {
			n, err := consumer.Drain(h, 64)
			require.NoError(t, err)
			total += n
			if n == 0 {
				if stopped {
					break
				}
				select {
				case <-stop:
					stopped = true
				default:
				}
			}
		}
		require.NoError(t, bad)
		<-stop // the senders return before the mailbox is closed (the Host's contract)
		select {
		case err := <-errs:
			require.NoError(t, err)
		default:
		}
		require.Equal(t, senders*each, total)
		require.Equal(t, []int{each, each, each, each}, next)
		require.Zero(t, consumer.Stats().Corrupt)
	})
}

// Bad input is refused with an error callers can test, and sends nothing.
func TestContractValidation(t *testing.T) {
	eachPlacement(t, func(t *testing.T, p placement) {
		consumer, sender := p.make(t, mailbox.Config{MaxParts: 4})
		require.ErrorIs(t, sender.Send(0, nil), mailbox.ErrTypeID)
		require.ErrorIs(t, sender.Send(mailbox.MaxTypeID+1, nil), mailbox.ErrTypeID)
		require.ErrorIs(t, sender.SendParts(1), mailbox.ErrArgument)
		require.ErrorIs(t, sender.SendParts(1, nil, nil, nil, nil, nil), mailbox.ErrArgument)
		require.Equal(t, mailbox.ErrTooLong, sender.Send(1, make([]byte, sender.MaxMessageSize()+1)))
		_, err := sender.Claim(1, -1)
		require.ErrorIs(t, err, mailbox.ErrArgument)
		_, err = sender.Claim(1, sender.MaxClaimLength()+1)
		require.Equal(t, mailbox.ErrTooLong, err)
		_, err = consumer.Drain(nil, 1)
		require.ErrorIs(t, err, mailbox.ErrArgument)
		require.Empty(t, drainAll(t, consumer))
	})
}

// point is a fixed-layout typed message (package message).
type point struct{ X, Y int32 }

const pointType int32 = 42

var points = message.MustFixed[point](pointType)

func (p point) bytes() []byte {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint32(b, uint32(p.X))
	binary.LittleEndian.PutUint32(b[4:], uint32(p.Y))
	return b
}

// Sends, drains and refusals allocate nothing, wherever the mailbox lives:
// a full mailbox's refusal asks a Host whether the consumer lives, and
// that answer allocates nothing either while it does.
func TestContractNoAllocation(t *testing.T) {
	if buildtags.Race {
		t.Skip("the race detector allocates")
	}
	eachPlacement(t, func(t *testing.T, p placement) {
		consumer, sender := p.make(t, mailbox.Config{Capacity: 16384})
		small, big := make([]byte, 32), bytesOf(1, sender.MaxClaimLength()+100)
		h := func(*mailbox.Message) mailbox.Action { return mailbox.Continue }
		s := sender.NewSender()
		// Warm up: the reassembly buffer and the parts slice reach their size.
		require.NoError(t, sender.SendParts(2, small, big))
		_, err := consumer.Drain(h, 10)
		require.NoError(t, err)
		allocs := testing.AllocsPerRun(200, func() {
			_ = sender.Send(1, small)
			_ = s.Send(1, big)
			_ = sender.SendParts(2, small, big)
			_ = points.Send(sender, &point{X: 1})
			_, _ = consumer.Drain(h, 10)
		})
		require.Zero(t, allocs, "send and drain")
		for sender.Send(1, small) == nil {
		}
		allocs = testing.AllocsPerRun(200, func() {
			if err := sender.Send(1, small); err != mailbox.ErrBackPressured {
				panic(err)
			}
			_ = s.Send(1, small)
		})
		require.Zero(t, allocs, "refusals, with the Host's consumer checks")
	})
}

// Close racing with senders of every kind: every send that returned nil
// is delivered exactly once and in its sender's order, every other one
// was refused with ErrClosed (never lost after an accept), and the actor
// ends by itself (agent.ErrDone) once the mailbox is closed and drained,
// with nothing left to arrive.
func TestContractCloseRacingSendersEndOfStream(t *testing.T) {
	eachPlacement(t, func(t *testing.T, p placement) {
		for round := range 5 {
			consumer, sender := p.make(t, mailbox.Config{Capacity: 16384})
			const senders = 4
			accepted := make([]int, senders)
			next := make([]int, senders)
			var bad error
			a, err := mailbox.NewActor("sink", consumer, func(m *mailbox.Message) mailbox.Action {
				id, seq := int(binary.LittleEndian.Uint32(m.Payload())), int(binary.LittleEndian.Uint32(m.Payload()[4:]))
				if id >= senders || seq != next[id] {
					bad = fmt.Errorf("sender %d: seq %d, want %d", id, seq, next[id])
				} else {
					next[id]++
				}
				return mailbox.Continue
			})
			require.NoError(t, err)
			var wg sync.WaitGroup
			for id := range senders {
				wg.Go(func() {
					s := sender.NewSender()
					for seq := 0; ; seq++ {
						var hdr [8]byte
						binary.LittleEndian.PutUint32(hdr[:], uint32(id))
						binary.LittleEndian.PutUint32(hdr[4:], uint32(seq))
						var err error
						switch (seq + id) % 4 {
						case 0:
							err = sender.Send(1, hdr[:])
						case 1:
							err = s.SendParts(2, hdr[:], bytesOf(seq, seq%40))
						case 2:
							var c mailbox.Claim
							if c, err = s.Claim(3, 8); err == nil {
								copy(c.Payload(), hdr[:])
								err = c.Commit()
							}
						default:
							err = s.Send(4, append(hdr[:], bytesOf(seq, sender.MaxClaimLength())...))
						}
						switch err {
						case nil:
							accepted[id] = seq + 1
						case mailbox.ErrBackPressured:
							seq-- // the same message again
						case mailbox.ErrClosed:
							return
						default:
							t.Errorf("sender %d: %v", id, err)
							return
						}
					}
				})
			}
			inv, err := agent.NewInvoker(a)
			require.NoError(t, err)
			require.NoError(t, inv.Start())
			closeAt := 200 + round*300
			delivered := 0
			for {
				n, err := inv.Invoke()
				delivered += n
				if delivered >= closeAt && consumer.Err() == nil {
					_, cerr := sender.Close(mailbox.Drain)
					require.NoError(t, cerr)
				}
				if err != nil {
					require.ErrorIs(t, err, agent.ErrDone)
					break
				}
			}
			wg.Wait()
			require.NoError(t, bad)
			require.Equal(t, accepted, next, "every accepted send delivered, in order, and nothing else")
			require.ErrorIs(t, sender.Send(1, make([]byte, 8)), mailbox.ErrClosed)
			require.Zero(t, consumer.Stats().Corrupt)
			require.NoError(t, a.OnClose())
		}
	})
}
