package ipc

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty"
	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/internal/buildtags"
	"github.com/dutyrt/duty/internal/record"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/message"
	"github.com/dutyrt/duty/ringbuf"
)

// The mailbox's shared words (mailbox/layout.go), from the start of spare
// slot mailboxWordsSlot: the layout the raw-bytes test asserts, written
// out here so that a change of package mailbox's layout fails it.
const (
	mbWordsState         = 0
	mbWordsDelivered     = 128
	mbWordsMaxDepth      = 136
	mbWordsTorn          = 144
	mbWordsCorrupt       = 152
	mbWordsDiscarded     = 160
	mbWordsBackPressured = 256
	mbWordsRefusedClosed = 264
)

// mbCheckEvery is package mailbox's consumerCheckEvery: a full mailbox
// asks its file whether the consumer lives on the first refusal, then on
// one in mbCheckEvery.
const mbCheckEvery = 16

// mbClockOpt returns the option that makes a mailbox file read clk (the
// file's creation time and first heartbeat, and a sender's view of the
// consumer heartbeat's age); the owner's mailbox reads it through
// mailbox.Config.Clock.
func mbClockOpt(clk *clock.Manual) Option { return WithClock(clk) }

func mbNewForTest(t testing.TB, cfg mailbox.Config, opts ...Option) (*mailbox.Mailbox, *MailboxFile) {
	t.Helper()
	mb, f, err := CreateMailbox(testDir(t), "mbox", cfg, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	return mb, f
}

func mbOpenForTest(t testing.TB, path string, opts ...Option) (*mailbox.Mailbox, *MailboxFile) {
	t.Helper()
	mb, f, err := OpenMailbox(ctxT(t), path, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	return mb, f
}

// mbDrainAll drains m until it is empty and returns what it delivered, as
// (type, parts) strings.
func mbDrainAll(t *testing.T, m *mailbox.Mailbox) [][]string {
	t.Helper()
	var out [][]string
	for {
		n, err := m.Drain(func(msg *mailbox.Message) mailbox.Action {
			got := []string{string(rune('0' + msg.TypeID()))}
			for _, p := range msg.Parts() {
				got = append(got, string(p))
			}
			out = append(out, got)
			return mailbox.Continue
		}, ringbuf.NoLimit)
		require.NoError(t, err)
		if n == 0 {
			return out
		}
	}
}

func mbNoop(*mailbox.Message) mailbox.Action { return mailbox.Continue }

// TestMailboxLayoutRawBytes checks every word of internal/ipcfile/mailbox.go and of
// the mailbox's shared words (mailbox/layout.go, spare slots 1-3) in the
// bytes of the file, read with plain little-endian reads: each statistic
// is driven to a value of its own (delivered 2, torn 1, corrupt 1, ...),
// so that two words swapped or moved fail the test.
func TestMailboxLayoutRawBytes(t *testing.T) {
	clk := clock.NewManual(time.UnixMilli(1_700_000_000_123))
	const capacity = 4096
	m, mf := mbNewForTest(t, mailbox.Config{Capacity: capacity, MaxMessageSize: 1000, MaxParts: 7,
		UnblockTimeout: 1500 * time.Millisecond, HeartbeatCycles: 1, Clock: clk},
		WithConsumerTimeout(3*time.Second), mbClockOpt(clk))
	s, _ := mbOpenForTest(t, mf.File.Path(), mbClockOpt(clk))

	le := binary.LittleEndian
	raw := func() []byte {
		b, err := os.ReadFile(mf.File.Path())
		require.NoError(t, err)
		return b
	}
	const hdr, words = 512, 640 // file offsets of spare slots 0 and 1
	require.Equal(t, hdr, spareSlot(mailboxHeaderSlot))
	require.Equal(t, words, spareSlot(mailboxWordsSlot))
	require.Equal(t, 384, mailbox.WordsLength, "spare slots 1-3")
	require.Equal(t, []int{8, 16, 24, 32, 40}, []int{mailboxVersionOffset, mailboxMaxMessageSizeOffset,
		mailboxMaxPartsOffset, mailboxConsumerTimeoutOffset, mailboxUnblockTimeoutOffset})
	require.Equal(t, int32(2), mailboxLayoutVersion)
	info, err := InspectMailbox(mf.File)
	require.NoError(t, err)
	require.Equal(t, MailboxInfo{Version: mailboxLayoutVersion}, info, "open, nothing stranded")

	b := raw()
	require.Equal(t, int64(4096+8192), int64(len(b)), "a KindRing file: header + ring + trailer, page-rounded")
	require.Equal(t, uint32(KindRing), le.Uint32(b[kindOffset:]))
	require.Zero(t, le.Uint64(b[hdr:]), "reserved")
	require.Equal(t, uint32(2), le.Uint32(b[hdr+8:]), "mailbox layout version")
	require.Zero(t, le.Uint32(b[hdr+12:]))
	require.Equal(t, uint64(1000), le.Uint64(b[hdr+16:]), "max message size")
	require.Equal(t, uint64(7), le.Uint64(b[hdr+24:]), "max parts")
	require.Equal(t, uint64(3000), le.Uint64(b[hdr+32:]), "consumer timeout ms")
	require.Equal(t, uint64(1500), le.Uint64(b[hdr+40:]), "unblock timeout ms")
	for o := words; o < words+mailbox.WordsLength; o++ {
		require.Zero(t, b[o], "shared words of a new mailbox: byte %d", o)
	}
	trailer := 4096 + capacity
	require.Equal(t, uint64(clk.EpochMillis()), le.Uint64(b[trailer+640:]), "consumer heartbeat: the ring's word")

	// Delivered 2, max depth.
	require.NoError(t, s.Send(1, []byte("a")))
	require.NoError(t, s.SendParts(2, []byte("b"), []byte("c")))
	require.Len(t, mbDrainAll(t, m), 2)
	// Corrupt 1: a framed record shorter than its frame header.
	require.NoError(t, mf.ring.Write(record.FlagFramed|1, []byte{1}))
	_, err = m.Drain(mbNoop, ringbuf.NoLimit)
	require.ErrorIs(t, err, mailbox.ErrCorruptFrame)
	// Torn 1: a claim never committed, released once the injected clock
	// passed the unblock timeout.
	_, err = s.Claim(3, 8)
	require.NoError(t, err)
	for i := 0; m.Stats().Torn == 0; i++ {
		require.Less(t, i, 10_000, "never unblocked")
		_, err := m.Drain(mbNoop, ringbuf.NoLimit)
		require.NoError(t, err)
		clk.Advance(10 * time.Millisecond)
	}
	require.NoError(t, m.Heartbeat())
	// Back-pressured 1: fill the ring, one refusal.
	queued := 0
	for {
		if err := s.Send(3, make([]byte, 400)); err != nil {
			require.Equal(t, mailbox.ErrBackPressured, err)
			break
		}
		queued++
	}
	require.Positive(t, queued)
	b = raw()
	require.Zero(t, le.Uint64(b[words+mbWordsState:]), "open")
	require.Equal(t, uint64(2), le.Uint64(b[words+mbWordsDelivered:]), "delivered")
	require.Positive(t, le.Uint64(b[words+mbWordsMaxDepth:]), "max depth")
	require.Equal(t, uint64(m.Stats().MaxDepth), le.Uint64(b[words+mbWordsMaxDepth:]), "max depth")
	require.Equal(t, uint64(1), le.Uint64(b[words+mbWordsTorn:]), "torn")
	require.Equal(t, uint64(1), le.Uint64(b[words+mbWordsCorrupt:]), "corrupt")
	require.Zero(t, le.Uint64(b[words+mbWordsDiscarded:]), "discarded")
	require.Equal(t, uint64(1), le.Uint64(b[words+mbWordsBackPressured:]), "back-pressured")
	require.Zero(t, le.Uint64(b[words+mbWordsRefusedClosed:]), "refused (closed)")
	require.Equal(t, uint64(clk.EpochMillis()), le.Uint64(b[trailer+640:]), "the drains' consumer heartbeat")
	require.Equal(t, int64(1), m.Stats().BackPressured, "the owner sees the sender's refusal")

	_, err = m.Close(mailbox.Drain)
	require.NoError(t, err)
	require.Equal(t, uint64(1), le.Uint64(raw()[words+mbWordsState:]), "Close(Drain) raised the state")
	require.Equal(t, mailbox.ErrClosed, s.Send(1, []byte("late")))
	n, err := m.Close(mailbox.Discard)
	require.NoError(t, err)
	require.Equal(t, queued, n)
	b = raw()
	require.Equal(t, uint64(2), le.Uint64(b[words+mbWordsState:]), "Close(Discard) raised it again")
	require.Equal(t, uint64(queued), le.Uint64(b[words+mbWordsDiscarded:]), "discarded")
	require.Equal(t, uint64(1), le.Uint64(b[words+mbWordsRefusedClosed:]), "refused (closed)")

	// Every byte of the spare slots not named above is zero.
	named := map[int]bool{hdr + 16: true, hdr + 24: true, hdr + 32: true, hdr + 40: true}
	for _, o := range []int{mbWordsState, mbWordsDelivered, mbWordsMaxDepth, mbWordsTorn, mbWordsCorrupt,
		mbWordsDiscarded, mbWordsBackPressured, mbWordsRefusedClosed} {
		named[words+o] = true
	}
	for o := spareSlotsOffset; o < spareSlotsOffset+spareSlotCount*spareSlotLength; o++ {
		if !named[o&^7] && (o < hdr+8 || o >= hdr+12) { // the version is 4 bytes
			require.Zero(t, b[o], "reserved byte %d", o)
		}
	}
	require.NoError(t, mf.Close(), "nothing queued: all discarded")
	require.Equal(t, uint64(2), le.Uint64(raw()[words+mbWordsState:]), "the closed state stays in the file")
}

// TestMailboxSendDrain: an opened view (another mapping of the file, as in
// another process) sends every shape; the owner drains them whole, in
// order. The view only sends: the consumer's operations are refused.
func TestMailboxSendDrain(t *testing.T) {
	m, mf := mbNewForTest(t, mailbox.Config{Capacity: 16384})
	s, sf := mbOpenForTest(t, mf.File.Path())
	require.False(t, sf.isOwner())
	require.True(t, mf.isOwner())
	require.Equal(t, m.MaxMessageSize(), s.MaxMessageSize())
	require.Equal(t, m.MaxParts(), s.MaxParts())
	require.Equal(t, defaultConsumerTimeout, sf.consumerTimeout())
	require.Equal(t, defaultConsumerTimeout, mf.consumerTimeout())
	require.Equal(t, mf.File.Path(), sf.File.Path())
	require.Equal(t, "mbox", m.Name())
	require.Equal(t, "mbox", s.Name())

	big := make([]byte, 5000)
	for i := range big {
		big[i] = byte(i)
	}
	require.NoError(t, s.Send(1, []byte("plain")))
	require.NoError(t, s.SendParts(2, []byte("x"), nil, []byte("z")))
	require.NoError(t, s.Send(3, big))
	c, err := s.Claim(4, 5)
	require.NoError(t, err)
	copy(c.Payload(), "claim")
	require.NoError(t, c.Commit())
	pc, err := s.ClaimParts(5, 1, 2)
	require.NoError(t, err)
	copy(pc.Part(0), "p")
	copy(pc.Part(1), "qq")
	require.NoError(t, pc.Commit())
	snd := s.NewSender()
	require.NoError(t, snd.Send(6, []byte("sender")))
	require.NoError(t, snd.SendParts(7, big, []byte("tail")))
	require.NoError(t, snd.SendContext(ctxT(t), 8, []byte("ctx")))
	require.NoError(t, s.SendPartsContext(ctxT(t), 9, []byte("a"), []byte("b")))
	require.NoError(t, mbQuotes.Send(s, &mbQuote{ID: 42}))

	require.Equal(t, [][]string{
		{"1", "plain"}, {"2", "x", "", "z"}, {"3", string(big)}, {"4", "claim"}, {"5", "p", "qq"},
		{"6", "sender"}, {"7", string(big), "tail"}, {"8", "ctx"}, {"9", "a", "b"},
		{string(rune('0' + mbQuoteType)), "\x2a\x00\x00\x00\x00\x00\x00\x00"},
	}, mbDrainAll(t, m))
	st := m.Stats()
	require.Equal(t, int64(10), st.Delivered)
	require.Equal(t, st, s.Stats(), "one set of counters, in the file")

	_, err = s.Drain(mbNoop, 1)
	require.ErrorIs(t, err, mailbox.ErrNotConsumer)
	require.ErrorIs(t, s.Heartbeat(), mailbox.ErrNotConsumer)
	_, err = s.Close(mailbox.Discard)
	require.ErrorIs(t, err, mailbox.ErrNotConsumer)
	_, err = mailbox.NewActor("orders", s, mbNoop)
	require.ErrorIs(t, err, mailbox.ErrNotConsumer)
	require.NoError(t, m.Err(), "none of them closed anything")
}

const mbQuoteType = 10

type mbQuote struct{ ID uint64 }

var mbQuotes = message.MustFixed[mbQuote](mbQuoteType)

// TestMailboxClose: the owner's Close is seen by every sender (state word
// in the file); messages left queued are reported, not dropped silently.
// A sender's Close closes only its own view; a Close(Drain) of any view
// closes the mailbox for all of them.
func TestMailboxClose(t *testing.T) {
	m, mf := mbNewForTest(t, mailbox.Config{})
	s, sf := mbOpenForTest(t, mf.File.Path())
	require.NoError(t, s.Send(1, []byte("left behind")))
	err := mf.Close()
	require.ErrorIs(t, err, mailbox.ErrNotDrained)
	require.NoError(t, mf.Close(), "idempotent")
	require.ErrorIs(t, m.Err(), mailbox.ErrClosed)
	require.ErrorIs(t, s.Err(), mailbox.ErrClosed)
	require.True(t, s.Stats().Closed)
	require.Equal(t, mailbox.ErrClosed, s.Err())
	require.Equal(t, mailbox.ErrClosed, s.Send(1, []byte("x")))
	require.Equal(t, mailbox.ErrClosed, s.SendContext(ctxT(t), 1, []byte("x")))
	_, _, err = OpenMailbox(ctxT(t), mf.File.Path())
	require.ErrorIs(t, err, mailbox.ErrClosed)
	l, err := sf.File.Liveness(time.Now(), 0)
	require.NoError(t, err)
	require.Equal(t, OwnerClosed, l.State)

	// A sender's Close only releases its mapping.
	m2, mf2 := mbNewForTest(t, mailbox.Config{})
	s2, sf2 := mbOpenForTest(t, mf2.File.Path())
	s3, _ := mbOpenForTest(t, mf2.File.Path())
	require.NoError(t, sf2.Close())
	require.ErrorIs(t, s2.Err(), mailbox.ErrClosed, "this view")
	require.Equal(t, mailbox.ErrClosed, s2.Send(1, []byte("x")))
	require.NoError(t, m2.Err(), "not the mailbox")
	require.NoError(t, m2.Send(1, []byte("still open")))
	require.NoError(t, s3.Send(1, []byte("still open")))
	require.Len(t, mbDrainAll(t, m2), 2)

	// Closing to senders is anyone's: a sender's Close(Drain) is the
	// mailbox's, and the owner drains what was queued before it.
	require.NoError(t, s3.Send(2, []byte("queued")))
	_, err = s3.Close(mailbox.Drain)
	require.NoError(t, err)
	require.ErrorIs(t, m2.Err(), mailbox.ErrClosed)
	require.Equal(t, mailbox.ErrClosed, m2.Send(1, nil))
	require.Equal(t, [][]string{{"2", "queued"}}, mbDrainAll(t, m2))
	require.NoError(t, mf2.Close())
}

// mbFillRing sends from s until the ring is full.
// The last sends are of one byte, so that no send of one byte fits.
func mbFillRing(t *testing.T, s *mailbox.Mailbox) {
	t.Helper()
	for _, n := range []int{100, 1} {
		for i := 0; ; i++ {
			err := s.Send(1, make([]byte, n))
			if err == mailbox.ErrBackPressured {
				break
			}
			require.NoError(t, err)
			require.Less(t, i, 1<<20)
		}
	}
}

// TestMailboxDeadConsumer: with injected clocks (no timing), a
// back-pressured sender gets ErrBackPressured while the consumer heartbeat
// is fresh and mailbox.ErrConsumerDead once it is older than the timeout
// (here the consumer's process runs: not ErrOwnerDead); a heartbeat from
// the consumer's Drain brings it back.
func TestMailboxDeadConsumer(t *testing.T) {
	start := time.Now()
	owner, sender := clock.NewManual(start), clock.NewManual(start)
	m, mf := mbNewForTest(t, mailbox.Config{Capacity: 4096, HeartbeatCycles: 1, Clock: owner},
		WithConsumerTimeout(time.Second), mbClockOpt(owner))
	s, sf := mbOpenForTest(t, mf.File.Path(), mbClockOpt(sender))
	mbFillRing(t, s)
	for range 3 * mbCheckEvery {
		require.Equal(t, mailbox.ErrBackPressured, s.Send(1, []byte("x")))
	}
	require.NoError(t, sf.CheckConsumer())
	require.NoError(t, mf.CheckConsumer())

	sender.Advance(1001 * time.Millisecond)
	err := sf.CheckConsumer()
	require.ErrorIs(t, err, mailbox.ErrConsumerDead)
	require.NotErrorIs(t, err, ErrOwnerDead, "this process runs: %v", err)
	require.ErrorContains(t, err, "still runs")
	require.ErrorContains(t, err, mf.File.Path())
	var dead int
	for range mbCheckEvery {
		if err := s.Send(1, []byte("x")); err != mailbox.ErrBackPressured {
			require.ErrorIs(t, err, mailbox.ErrConsumerDead)
			require.ErrorContains(t, err, "still runs", "the file's description of the consumer")
			dead++
		}
	}
	require.Equal(t, 1, dead, "one refusal in %d checks", mbCheckEvery)
	snd := s.NewSender()
	require.ErrorIs(t, snd.Send(1, []byte("x")), mailbox.ErrConsumerDead, "a sender's first refusal checks")
	bp := m.Stats().BackPressured
	require.ErrorIs(t, s.SendContext(ctxT(t), 1, []byte("x")), mailbox.ErrConsumerDead)
	require.ErrorIs(t, snd.SendPartsContext(ctxT(t), 1, []byte("x"), []byte("y")), mailbox.ErrConsumerDead)
	require.Equal(t, bp+2, m.Stats().BackPressured, "each wait counts once")
	_, _, err = OpenMailbox(ctxT(t), mf.File.Path(), mbClockOpt(sender))
	require.ErrorIs(t, err, mailbox.ErrConsumerDead)
	require.NoError(t, mf.CheckConsumer(), "the owner's clock: fresh")

	// A heartbeat far in the future is as stale as one far in the past.
	sender.Advance(-3 * time.Second)
	require.ErrorIs(t, sf.CheckConsumer(), mailbox.ErrConsumerDead)

	// The consumer drains (and heartbeats at its clock's time).
	owner.SetWall(sender.Now())
	require.NotEmpty(t, mbDrainAll(t, m))
	require.NoError(t, sf.CheckConsumer())
	require.Equal(t, owner.EpochMillis(), sf.consumerHeartbeat())
	require.Equal(t, owner.EpochMillis(), mf.consumerHeartbeat())
	require.NoError(t, s.Send(1, []byte("x")))

	// A waiting SendContext returns as soon as its context ends.
	mbFillRing(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.Equal(t, context.Canceled, s.SendContext(ctx, 1, []byte("x")))
}

// TestMailboxDeadConsumerEverySendPath: every path that can find the
// mailbox full (the Mailbox's methods, a Sender's, message.Fixed.Send and the
// waiting ones) asks the file, and reports a stale consumer heartbeat as
// mailbox.ErrConsumerDead instead of back-pressure within mbCheckEvery
// refusals (a waiting send at once). Before the mailbox was the file's,
// only the ipc wrapper's methods did; the raw mailbox under it stayed
// back-pressured for ever.
func TestMailboxDeadConsumerEverySendPath(t *testing.T) {
	p := make([]byte, 56)
	big := make([]byte, 1500) // fragmented in a 4 KiB ring (records of at most 512 bytes)
	commit := func(c mailbox.Claim, err error) error {
		if err == nil {
			err = c.Commit()
		}
		return err
	}
	commitParts := func(c mailbox.PartsClaim, err error) error {
		if err == nil {
			err = c.Commit()
		}
		return err
	}
	type send func(ctx context.Context, m *mailbox.Mailbox, s *mailbox.Sender) error
	paths := map[string]send{
		"Send":            func(_ context.Context, m *mailbox.Mailbox, _ *mailbox.Sender) error { return m.Send(1, p) },
		"Send fragmented": func(_ context.Context, m *mailbox.Mailbox, _ *mailbox.Sender) error { return m.Send(1, big) },
		"SendParts":       func(_ context.Context, m *mailbox.Mailbox, _ *mailbox.Sender) error { return m.SendParts(1, p, p) },
		"Claim":           func(_ context.Context, m *mailbox.Mailbox, _ *mailbox.Sender) error { return commit(m.Claim(1, 56)) },
		"ClaimParts": func(_ context.Context, m *mailbox.Mailbox, _ *mailbox.Sender) error {
			return commitParts(m.ClaimParts(1, 20, 20))
		},
		"Fixed.Send": func(_ context.Context, m *mailbox.Mailbox, _ *mailbox.Sender) error {
			return mbQuotes.Send(m, &mbQuote{})
		},
		"SendContext": func(ctx context.Context, m *mailbox.Mailbox, _ *mailbox.Sender) error {
			return m.SendContext(ctx, 1, p)
		},
		"SendPartsContext": func(ctx context.Context, m *mailbox.Mailbox, _ *mailbox.Sender) error {
			return m.SendPartsContext(ctx, 1, p, p)
		},
		"Sender.Send":      func(_ context.Context, _ *mailbox.Mailbox, s *mailbox.Sender) error { return s.Send(1, p) },
		"Sender.SendParts": func(_ context.Context, _ *mailbox.Mailbox, s *mailbox.Sender) error { return s.SendParts(1, p, p) },
		"Sender.Claim":     func(_ context.Context, _ *mailbox.Mailbox, s *mailbox.Sender) error { return commit(s.Claim(1, 56)) },
		"Sender.ClaimParts": func(_ context.Context, _ *mailbox.Mailbox, s *mailbox.Sender) error {
			return commitParts(s.ClaimParts(1, 20, 20))
		},
		"Sender.SendContext": func(ctx context.Context, _ *mailbox.Mailbox, s *mailbox.Sender) error {
			return s.SendContext(ctx, 1, p)
		},
		"Sender.SendPartsContext": func(ctx context.Context, _ *mailbox.Mailbox, s *mailbox.Sender) error {
			return s.SendPartsContext(ctx, 1, p, p)
		},
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for name, send := range paths {
		t.Run(name, func(t *testing.T) {
			clk := clock.NewManual(time.Now())
			_, mf := mbNewForTest(t, mailbox.Config{Capacity: 4096, Clock: clk},
				WithConsumerTimeout(time.Second), mbClockOpt(clk))
			s, _ := mbOpenForTest(t, mf.File.Path(), mbClockOpt(clk))
			require.Greater(t, len(big), s.MaxClaimLength(), "fragmented")
			snd := s.NewSender()
			mbFillRing(t, s)
			for range 2 * mbCheckEvery {
				// A waiting send to a live consumer waits: its context ends it.
				err := send(cancelled, s, snd)
				if err != context.Canceled {
					require.Equal(t, mailbox.ErrBackPressured, err, "a live consumer: back-pressure")
				}
			}
			clk.Advance(2 * time.Second) // the owner does not drain: its heartbeat goes stale
			var err error
			for range mbCheckEvery {
				if err = send(ctxT(t), s, snd); err != mailbox.ErrBackPressured {
					break
				}
			}
			require.ErrorIs(t, err, mailbox.ErrConsumerDead, "within %d refusals", mbCheckEvery)
			require.ErrorContains(t, err, mf.File.Path())
			require.NotErrorIs(t, err, ErrOwnerDead, "this process runs")
		})
	}
}

// TestMailboxHeartbeatCycles: Drain stores the consumer heartbeat once per
// HeartbeatCycles calls, at its clock's time (mailbox.Config.Clock);
// Heartbeat forces it, and the file's owner heartbeat with it.
func TestMailboxHeartbeatCycles(t *testing.T) {
	clk := clock.NewManual(time.Now())
	m, mf := mbNewForTest(t, mailbox.Config{HeartbeatCycles: 4, Clock: clk}, mbClockOpt(clk))
	first := mf.consumerHeartbeat()
	require.Equal(t, clk.EpochMillis(), first, "the creation time")
	clk.Advance(time.Second)
	for range 3 {
		_, err := m.Drain(mbNoop, 1)
		require.NoError(t, err)
		require.Equal(t, first, mf.consumerHeartbeat())
	}
	_, err := m.Drain(mbNoop, 1)
	require.NoError(t, err)
	require.Equal(t, first+1000, mf.consumerHeartbeat())
	require.Equal(t, first+1000, mf.ring.ConsumerHeartbeatTime())
	clk.Advance(time.Second)
	require.NoError(t, m.Heartbeat())
	require.Equal(t, first+2000, mf.consumerHeartbeat())
	hb, err := mf.File.heartbeatMillis()
	require.NoError(t, err)
	require.Equal(t, first+2000, hb, "the file's owner heartbeat too")
}

// TestMailboxOpenErrors: files that are not (or not yet, or not valid)
// mailboxes give the package's sentinels, never a panic or a hang.
func TestMailboxOpenErrors(t *testing.T) {
	dir := testDir(t)
	ring, err := CreateRing(dir, "plain", 4096)
	require.NoError(t, err)
	defer ring.Close()
	late := WithClock(clock.NewManual(time.Now().Add(time.Hour)))
	_, _, err = OpenMailbox(ctxT(t), ring.File.Path(), late)
	require.ErrorIs(t, err, errNotMailbox)
	require.ErrorIs(t, err, ErrKind)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, _, err = OpenMailbox(ctx, ring.File.Path())
	require.ErrorIs(t, err, ErrNotReady, "a fresh ring may still become a mailbox: wait, bounded by ctx")
	require.ErrorIs(t, err, context.DeadlineExceeded)

	f, err := create(dir, "other", kindUserMin, []int{4096})
	require.NoError(t, err)
	defer f.Close()
	_, _, err = OpenMailbox(ctxT(t), f.Path())
	require.ErrorIs(t, err, ErrKind)

	_, _, err = OpenMailbox(ctxT(t), dir+"/missing")
	require.ErrorIs(t, err, os.ErrNotExist)

	cases := []struct {
		name   string
		slot   int
		offset int
		value  int64
		want   error
	}{
		{"version too new", mailboxHeaderSlot, mailboxVersionOffset, 3, ErrVersion},
		{"version 1: the old layout", mailboxHeaderSlot, mailboxVersionOffset, 1, ErrVersion},
		{"negative version", mailboxHeaderSlot, mailboxVersionOffset, -1, ErrVersion},
		{"max message 0", mailboxHeaderSlot, mailboxMaxMessageSizeOffset, 0, ErrCorrupt},
		{"max message > ring", mailboxHeaderSlot, mailboxMaxMessageSizeOffset, 1 << 40, ErrCorrupt},
		{"max message > half ring", mailboxHeaderSlot, mailboxMaxMessageSizeOffset, 60000, ErrCorrupt},
		{"max parts 0", mailboxHeaderSlot, mailboxMaxPartsOffset, 0, ErrCorrupt},
		{"max parts huge", mailboxHeaderSlot, mailboxMaxPartsOffset, 1 << 40, ErrCorrupt},
		{"consumer timeout 0", mailboxHeaderSlot, mailboxConsumerTimeoutOffset, 0, ErrCorrupt},
		{"consumer timeout negative", mailboxHeaderSlot, mailboxConsumerTimeoutOffset, -5, ErrCorrupt},
		{"unblock timeout huge", mailboxHeaderSlot, mailboxUnblockTimeoutOffset, 1 << 50, ErrCorrupt},
		{"closed (drain)", mailboxWordsSlot, mbWordsState, 1, mailbox.ErrClosed},
		{"closed (discard)", mailboxWordsSlot, mbWordsState, 2, mailbox.ErrClosed},
		{"state word corrupt", mailboxWordsSlot, mbWordsState, 3, mailbox.ErrCorrupt},
		{"state word negative", mailboxWordsSlot, mbWordsState, -1, mailbox.ErrCorrupt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, mf := mbNewForTest(t, mailbox.Config{})
			slot, err := mf.File.spareSlotAt(c.slot)
			require.NoError(t, err)
			if c.slot == mailboxHeaderSlot && c.offset == mailboxVersionOffset {
				binary.LittleEndian.PutUint32(slot[c.offset:], uint32(int32(c.value)))
			} else {
				binary.LittleEndian.PutUint64(slot[c.offset:], uint64(c.value))
			}
			mb, sf, err := OpenMailbox(ctxT(t), mf.File.Path())
			require.ErrorIs(t, err, c.want)
			require.Nil(t, mb)
			require.Nil(t, sf)
		})
	}
}

func TestMailboxCreateErrors(t *testing.T) {
	dir := testDir(t)
	for _, c := range []struct {
		cfg  mailbox.Config
		opts []Option
	}{
		{cfg: mailbox.Config{Capacity: 512}},
		{cfg: mailbox.Config{Capacity: 5000}},
		{opts: []Option{WithConsumerTimeout(time.Microsecond)}},
		{opts: []Option{WithConsumerTimeout(-time.Second)}},
		{opts: []Option{WithConsumerTimeout(48 * time.Hour)}},
		{cfg: mailbox.Config{UnblockTimeout: 48 * time.Hour}},
		{cfg: mailbox.Config{UnblockTimeout: -time.Second}},
		{cfg: mailbox.Config{HeartbeatCycles: -1}},
		{cfg: mailbox.Config{MaxParts: 1 << 30}},
		{cfg: mailbox.Config{MaxParts: -1}},
		{cfg: mailbox.Config{MaxMessageSize: 1 << 20}},
		{cfg: mailbox.Config{MaxMessageSize: -1}},
		{cfg: mailbox.Config{Host: (*mailboxHost)(nil)}}, // the file is the host
	} {
		mb, mf, err := CreateMailbox(dir, "bad", c.cfg, c.opts...)
		require.ErrorIs(t, err, ErrArgument, "%+v", c.cfg)
		require.Nil(t, mb)
		require.Nil(t, mf)
	}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, ents, "nothing left behind")
	_, _, err = CreateMailbox(dir, "../x", mailbox.Config{})
	require.ErrorIs(t, err, errName)
	_, mf, err := CreateMailbox(dir, "dup", mailbox.Config{})
	require.NoError(t, err)
	defer mf.Close()
	_, _, err = CreateMailbox(dir, "dup", mailbox.Config{})
	require.ErrorIs(t, err, errExists)
}

// TestMailboxCountersFile: statistics mirrored into a counters file, read
// back through a read-only view as a stat tool would; Close frees them.
func TestMailboxCountersFile(t *testing.T) {
	dir := testDir(t)
	cf, err := CreateCounters(dir, "counters", 16, nil)
	require.NoError(t, err)
	defer cf.Close()
	clk := clock.NewManual(time.Now())
	m, mf, err := CreateMailbox(dir, "mbox", mailbox.Config{Capacity: 4096, UnblockTimeout: time.Millisecond, Clock: clk},
		WithCounters(cf), mbClockOpt(clk))
	require.NoError(t, err)
	s, _ := mbOpenForTest(t, mf.File.Path(), mbClockOpt(clk))
	mbFillRing(t, s)
	require.NoError(t, m.Heartbeat())

	ro, err := OpenCounters(context.Background(), cf.File.Path())
	require.NoError(t, err)
	defer ro.Close()
	values := func() map[string]int64 {
		got := map[string]int64{}
		require.NoError(t, ro.Reader().ForEachRecord(func(rec counters.Record) bool {
			typeID, value := rec.TypeID, rec.Value
			got[counters.TypeName(typeID)] = value
			return true
		}))
		return got
	}
	v := values()
	require.Equal(t, int64(m.Stats().Depth), v["mailbox-depth"])
	require.Positive(t, v["mailbox-depth"])
	require.Equal(t, m.Stats().BackPressured, v["back-pressure"])
	require.Positive(t, v["back-pressure"])
	require.Equal(t, mf.consumerHeartbeat(), v["heartbeat"])
	require.Equal(t, clk.EpochMillis(), v["heartbeat"])

	mbDrainAll(t, m)
	_, err = s.Claim(1, 8) // never committed: torn
	require.NoError(t, err)
	for i := 0; m.Stats().Torn == 0 || m.Stats().Depth > 0; i++ {
		require.Less(t, i, 10_000, "never unblocked: %+v", m.Stats())
		mbDrainAll(t, m)
		clk.Advance(time.Millisecond)
	}
	require.NoError(t, m.Heartbeat())
	v = values()
	require.Zero(t, v["mailbox-depth"])
	require.Equal(t, int64(1), v["unblocked-claims"])
	require.Zero(t, v["torn-messages"])
	require.Equal(t, clk.EpochMillis(), v["heartbeat"])

	require.NoError(t, mf.Close())
	require.Empty(t, values(), "freed at Close")

	_, _, err = CreateMailbox(dir, "ro", mailbox.Config{}, WithCounters(ro))
	require.ErrorIs(t, err, ErrArgument, "a read-only counters file cannot hold the mailbox's counters")
}

// TestMailboxStress: three mappings of one file (the owner and two opened
// views, as three processes would have), two goroutines sending through
// each view (one with a mailbox.Sender) every shape of mbGen into a small
// ring; the owner checks exactly-once, per-sender order and content. Run
// it with -race.
func TestMailboxStress(t *testing.T) {
	const views, perView, count = 2, 2, 3000
	m, mf := mbNewForTest(t, mailbox.Config{Capacity: 32768})
	var wg sync.WaitGroup
	errs := make(chan error, views*perView)
	for v := range views {
		s, _ := mbOpenForTest(t, mf.File.Path())
		for g := range perView {
			id := v*perView + g
			wg.Add(1)
			go func() {
				defer wg.Done()
				var snd *mailbox.Sender
				if g == 0 {
					snd = s.NewSender()
				}
				var gen mbGen
				for seq := range uint64(count) {
					if err := gen.send(ctxT(t), s, snd, id, seq); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	}
	c := &mbChecker{next: make([]uint64, views*perView)}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	mbDrainUntil(t, m, c, views*perView*count, func() {
		select {
		case err := <-errs:
			require.NoError(t, err)
		default:
		}
	})
	<-done
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	st := m.Stats()
	require.Equal(t, int64(views*perView*count), st.Delivered)
	require.Zero(t, st.Torn+st.Corrupt)
}

// TestMailboxNoAllocations: the send paths (the probes of the consumer's
// process that sends crossing eighths of the ring make included), a
// refused send with a live consumer, and Drain with its heartbeat (the
// file's included) allocate nothing.
func TestMailboxNoAllocations(t *testing.T) {
	if buildtags.Race {
		t.Skip("the race detector allocates")
	}
	m, mf := mbNewForTest(t, mailbox.Config{HeartbeatCycles: 1})
	s, _ := mbOpenForTest(t, mf.File.Path())
	snd := s.NewSender()
	small := make([]byte, 32)
	big := make([]byte, 9000)
	ctx := context.Background()
	drain := func() {
		if _, err := m.Drain(mbNoop, ringbuf.NoLimit); err != nil {
			t.Fatal(err)
		}
	}
	for name, fn := range map[string]func(){
		"Send":        func() { _ = s.Send(1, small); drain() },
		"Send large":  func() { _ = s.Send(1, big); drain() },
		"SendParts":   func() { _ = s.SendParts(1, small, small); drain() },
		"SendContext": func() { _ = s.SendContext(ctx, 1, small); drain() },
		"Sender":      func() { _ = snd.Send(1, small); _ = snd.SendParts(1, small, big); drain() },
		"Claim": func() {
			c, _ := s.Claim(1, 32)
			_ = c.Commit()
			drain()
		},
		"Fixed.Send": func() { _ = mbQuotes.Send(s, &mbQuote{ID: 1}); drain() },
		// Past two eighths of the ring without a drain: the second
		// crossing probes the consumer's process (its lock, held).
		"Send past eighths": func() {
			for range 3 * m.Capacity() / 8 / record.Size(len(small)) {
				_ = s.Send(1, small)
			}
			drain()
		},
		"idle Drain": drain,
		"Heartbeat":  func() { _ = m.Heartbeat() }, // fstat + guarded store included
	} {
		require.Zero(t, testing.AllocsPerRun(1000, fn), name)
	}
	mbFillRing(t, s)
	require.Zero(t, testing.AllocsPerRun(1000, func() { _ = s.Send(1, small) }), "refused with a live consumer")
	require.Zero(t, testing.AllocsPerRun(1000, func() { _ = snd.Send(1, small) }), "a Sender refused with a live consumer")
	require.Zero(t, testing.AllocsPerRun(1000, func() { _, _ = s.Claim(1, 32) }), "a Claim refused with a live consumer")
}

// TestMailboxCorruptStateWord: a state word above the defined states (or
// negative), as a faulty process sharing the file could store, is
// corruption, not a close. OpenMailbox, every send refused for it, Drain,
// Heartbeat, an actor's duty cycle, Close(Discard) and the file's Close
// report an error wrapping mailbox.ErrCorrupt (and duty.ErrCorrupt), the
// word is left as it is, and the queued message is still there. The word
// is the first of the mailbox's shared words (spare slot 1).
func TestMailboxCorruptStateWord(t *testing.T) {
	for _, word := range []int64{3, 1 << 40, -1} {
		t.Run(fmt.Sprint(word), func(t *testing.T) {
			m, mf := mbNewForTest(t, mailbox.Config{})
			s, _ := mbOpenForTest(t, mf.File.Path())
			require.NoError(t, s.Send(1, []byte("queued")))
			slot, err := mf.File.spareSlotAt(mailboxWordsSlot)
			require.NoError(t, err)
			binary.LittleEndian.PutUint64(slot[mbWordsState:], uint64(word))

			require.ErrorIs(t, s.Err(), mailbox.ErrCorrupt)
			require.ErrorIs(t, m.Err(), mailbox.ErrCorrupt)
			require.Zero(t, m.Stats().RefusedClosed, "Err counts no refusal")
			_, _, err = OpenMailbox(ctxT(t), mf.File.Path())
			require.ErrorIs(t, err, mailbox.ErrCorrupt, "OpenMailbox")
			require.ErrorIs(t, err, duty.ErrCorrupt, "OpenMailbox")
			sender := s.NewSender()
			for name, send := range map[string]func() error{
				"Send":             func() error { return s.Send(1, []byte("x")) },
				"SendParts":        func() error { return s.SendParts(1, []byte("x"), []byte("y")) },
				"SendContext":      func() error { return s.SendContext(ctxT(t), 1, []byte("x")) },
				"SendPartsContext": func() error { return s.SendPartsContext(ctxT(t), 1, []byte("x"), []byte("y")) },
				"Fixed.Send":       func() error { return mbQuotes.Send(s, &mbQuote{}) },
				"Claim":            func() error { _, err := s.Claim(1, 8); return err },
				"ClaimParts":       func() error { _, err := s.ClaimParts(1, 8, 8); return err },
				"Sender.Send":      func() error { return sender.Send(1, []byte("x")) },
				"Sender.SendParts": func() error { return sender.SendParts(1, []byte("x"), []byte("y")) },
				"Sender.Claim":     func() error { _, err := sender.Claim(1, 8); return err },
				"Sender.SendContext": func() error {
					return sender.SendContext(ctxT(t), 1, []byte("x"))
				},
				"owner Send": func() error { return m.Send(1, []byte("x")) },
			} {
				err := send()
				require.ErrorIs(t, err, mailbox.ErrCorrupt, name)
				require.NotErrorIs(t, err, mailbox.ErrClosed, name)
			}
			_, err = m.Drain(mbNoop, ringbuf.NoLimit)
			require.ErrorIs(t, err, mailbox.ErrCorrupt, "Drain (no heartbeat due: the drain checks the word itself)")
			require.ErrorIs(t, m.Heartbeat(), mailbox.ErrCorrupt)
			a, err := mailbox.NewActor("orders", m, mbNoop)
			require.NoError(t, err)
			_, err = a.DoWork()
			require.ErrorIs(t, err, mailbox.ErrCorrupt, "an actor's duty cycle")
			term, _ := agent.IsTermination(err)
			require.False(t, term, "corruption is reported, not a reason to stop")
			n, err := m.Close(mailbox.Discard)
			require.ErrorIs(t, err, mailbox.ErrCorrupt, "Close(Discard)")
			require.Zero(t, n)
			_, err = s.Close(mailbox.Drain)
			require.ErrorIs(t, err, mailbox.ErrCorrupt, "a sender's Close(Drain)")
			require.Equal(t, uint64(word), binary.LittleEndian.Uint64(slot[mbWordsState:]), "left as it is")
			require.Positive(t, m.Stats().Depth, "the queued message is still there")
			require.Zero(t, m.Stats().Delivered, "nothing delivered")
			err = mf.Close()
			require.ErrorIs(t, err, mailbox.ErrCorrupt)
			require.ErrorIs(t, err, mailbox.ErrNotDrained)
			require.True(t, errors.Is(err, duty.ErrCorrupt))
		})
	}
}
