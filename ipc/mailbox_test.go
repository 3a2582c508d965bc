package ipc

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/ipc/counters"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/ringbuf"
)

// mbClock is a settable wall clock for WithClock.
type mbClock struct{ ms atomic.Int64 }

func newMbClock(t time.Time) *mbClock {
	c := &mbClock{}
	c.ms.Store(t.UnixMilli())
	return c
}
func (c *mbClock) now() time.Time           { return time.UnixMilli(c.ms.Load()) }
func (c *mbClock) add(d time.Duration)      { c.ms.Add(d.Milliseconds()) }
func (c *mbClock) option() Option           { return WithClock(c.now) }
func (c *mbClock) set(t time.Time) *mbClock { c.ms.Store(t.UnixMilli()); return c }

func mbNewForTest(t testing.TB, cfg MailboxConfig, opts ...Option) *Mailbox {
	t.Helper()
	m, err := CreateMailbox(testDir(t), "mbox", cfg, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func mbOpenForTest(t testing.TB, path string, opts ...Option) *Mailbox {
	t.Helper()
	m, err := OpenMailbox(ctxT(t), path, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// mbDrainAll drains m until it is empty and returns what it delivered, as
// (type, parts) strings.
func mbDrainAll(t *testing.T, m *Mailbox) [][]string {
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

// TestMailboxLayoutRawBytes checks every word of mailbox_layout.go in the
// bytes of the file, read with plain little-endian reads.
func TestMailboxLayoutRawBytes(t *testing.T) {
	clk := newMbClock(time.UnixMilli(1_700_000_000_123))
	const capacity = 4096
	m := mbNewForTest(t, MailboxConfig{Capacity: capacity, MaxMessageSize: 1000, MaxParts: 7,
		ConsumerTimeout: 3 * time.Second, UnblockTimeout: 1500 * time.Millisecond}, clk.option())
	s := mbOpenForTest(t, m.Path(), clk.option())

	le := binary.LittleEndian
	raw := func() []byte {
		b, err := os.ReadFile(m.Path())
		require.NoError(t, err)
		return b
	}
	b := raw()
	require.Equal(t, int64(4096+8192), int64(len(b)), "a KindRing file: header + ring + trailer, page-rounded")
	require.Equal(t, uint32(KindRing), le.Uint32(b[KindOffset:]))
	require.Equal(t, 512, SpareSlotsOffset+MailboxHeaderSlot*SpareSlotLength)
	require.Equal(t, 640, SpareSlotsOffset+MailboxConsumerStatsSlot*SpareSlotLength)
	require.Equal(t, 768, SpareSlotsOffset+MailboxSenderStatsSlot*SpareSlotLength)
	require.Equal(t, uint64(mailbox.StateOpen), le.Uint64(b[512:]))
	require.Equal(t, uint32(1), le.Uint32(b[520:]), "mailbox layout version")
	require.Zero(t, le.Uint32(b[524:]))
	require.Equal(t, uint64(1000), le.Uint64(b[528:]), "max message size")
	require.Equal(t, uint64(7), le.Uint64(b[536:]), "max parts")
	require.Equal(t, uint64(3000), le.Uint64(b[544:]), "consumer timeout ms")
	require.Equal(t, uint64(1500), le.Uint64(b[552:]), "unblock timeout ms")
	for o := 560; o < 512+3*128; o++ {
		if o < 640 || (o >= 680 && o < 768) || o >= 784 {
			require.Zero(t, b[o], "reserved byte %d", o)
		}
	}
	trailer := 4096 + capacity
	require.Equal(t, uint64(clk.ms.Load()), le.Uint64(b[trailer+640:]), "consumer heartbeat: the ring's word")

	require.NoError(t, s.Send(1, []byte("a")))
	require.NoError(t, s.SendParts(2, []byte("b"), []byte("c")))
	require.Len(t, mbDrainAll(t, m), 2)
	for {
		if err := s.Send(3, make([]byte, 400)); err != nil {
			require.Equal(t, mailbox.ErrBackPressured, err)
			break
		}
	}
	b = raw()
	require.Equal(t, uint64(2), le.Uint64(b[640+MailboxDeliveredOffset:]), "delivered")
	require.Positive(t, le.Uint64(b[640+MailboxMaxDepthOffset:]), "max depth")
	require.Equal(t, uint64(1), le.Uint64(b[768+MailboxBackPressuredOffset:]), "back-pressured")
	require.Equal(t, int64(1), m.Stats().BackPressured, "the owner sees the sender's refusal")

	require.ErrorIs(t, m.Close(), mailbox.ErrNotDrained, "the ring was left full")
	require.Equal(t, mailbox.ErrClosed, s.Send(1, []byte("late")))
	b = raw()
	require.Equal(t, uint64(mailbox.StateClosedDrain), le.Uint64(b[512:]), "Close raised the state")
	require.Equal(t, uint64(1), le.Uint64(b[768+MailboxRefusedClosedOffset:]), "refused (closed)")
}

// TestMailboxSendDrain: an opened view (another mapping of the file, as in
// another process) sends every shape; the owner drains them whole, in
// order.
func TestMailboxSendDrain(t *testing.T) {
	m := mbNewForTest(t, MailboxConfig{Capacity: 16384})
	s := mbOpenForTest(t, m.Path())
	require.False(t, s.IsOwner())
	require.True(t, m.IsOwner())
	require.Equal(t, m.Mailbox().MaxMessageSize(), s.Mailbox().MaxMessageSize())
	require.Equal(t, DefaultConsumerTimeout, s.ConsumerTimeout())

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
	require.NoError(t, SendTyped(s, mbQuote{id: 42}))

	require.Equal(t, [][]string{
		{"1", "plain"}, {"2", "x", "", "z"}, {"3", string(big)}, {"4", "claim"}, {"5", "p", "qq"},
		{"6", "sender"}, {"7", string(big), "tail"}, {"8", "ctx"}, {"9", "a", "b"},
		{string(rune('0' + mbQuoteType)), "\x2a\x00\x00\x00\x00\x00\x00\x00"},
	}, mbDrainAll(t, m))
	st := m.Stats()
	require.Equal(t, int64(10), st.Delivered)
	require.Equal(t, st, s.Stats(), "one set of counters, in the file")

	_, err = s.Drain(func(*mailbox.Message) mailbox.Action { return mailbox.Continue }, 1)
	require.ErrorIs(t, err, ErrNotOwner)
	require.ErrorIs(t, s.Heartbeat(), ErrNotOwner)
}

const mbQuoteType = 10

type mbQuote struct{ id uint64 }

func (q mbQuote) TypeID() int32   { return mbQuoteType }
func (q mbQuote) EncodedLen() int { return 8 }
func (q mbQuote) Encode(b []byte) { binary.LittleEndian.PutUint64(b, q.id) }

// TestMailboxClose: the owner's Close is seen by every sender (state word
// in the file); messages left queued are reported, not dropped silently.
func TestMailboxClose(t *testing.T) {
	m := mbNewForTest(t, MailboxConfig{})
	s := mbOpenForTest(t, m.Path())
	require.NoError(t, s.Send(1, []byte("left behind")))
	err := m.Close()
	require.ErrorIs(t, err, mailbox.ErrNotDrained)
	require.NoError(t, m.Close(), "idempotent")
	require.True(t, s.IsClosed())
	require.Equal(t, mailbox.ErrClosed, s.Send(1, []byte("x")))
	require.Equal(t, mailbox.ErrClosed, s.SendContext(ctxT(t), 1, []byte("x")))
	_, err = OpenMailbox(ctxT(t), m.Path())
	require.ErrorIs(t, err, mailbox.ErrClosed)
	l, err := s.File().Liveness(time.Now(), 0)
	require.NoError(t, err)
	require.Equal(t, Closed, l.State)

	// A sender's Close only releases its mapping.
	m2 := mbNewForTest(t, MailboxConfig{})
	s2 := mbOpenForTest(t, m2.Path())
	require.NoError(t, s2.Close())
	require.NoError(t, m2.Send(1, []byte("still open")))
	require.Len(t, mbDrainAll(t, m2), 1)
	require.NoError(t, m2.Close())
}

// mbFillRing sends from s until the ring is full.
// The last sends are of one byte, so that no send of one byte fits.
func mbFillRing(t *testing.T, s *Mailbox) {
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
// is fresh and ErrConsumerDead once it is older than the timeout (here the
// consumer's process runs: not ErrOwnerDead); a heartbeat from the
// consumer's Drain brings it back.
func TestMailboxDeadConsumer(t *testing.T) {
	start := time.Now()
	owner, sender := newMbClock(start), newMbClock(start)
	m := mbNewForTest(t, MailboxConfig{Capacity: 4096, ConsumerTimeout: time.Second, HeartbeatCycles: 1}, owner.option())
	s := mbOpenForTest(t, m.Path(), sender.option())
	mbFillRing(t, s)
	for range 3 * mailboxCheckEvery {
		require.Equal(t, mailbox.ErrBackPressured, s.Send(1, []byte("x")))
	}
	require.NoError(t, s.CheckConsumer())

	sender.add(1001 * time.Millisecond)
	err := s.CheckConsumer()
	require.ErrorIs(t, err, ErrConsumerDead)
	require.NotErrorIs(t, err, ErrOwnerDead, "this process runs: %v", err)
	require.ErrorContains(t, err, "still runs")
	var dead int
	for range mailboxCheckEvery {
		if err := s.Send(1, []byte("x")); err != mailbox.ErrBackPressured {
			require.ErrorIs(t, err, ErrConsumerDead)
			dead++
		}
	}
	require.Equal(t, 1, dead, "one refusal in %d checks", mailboxCheckEvery)
	snd := s.NewSender()
	require.ErrorIs(t, snd.Send(1, []byte("x")), ErrConsumerDead, "a sender's first refusal checks")
	bp := m.Stats().BackPressured
	require.ErrorIs(t, s.SendContext(ctxT(t), 1, []byte("x")), ErrConsumerDead)
	require.ErrorIs(t, snd.SendPartsContext(ctxT(t), 1, []byte("x"), []byte("y")), ErrConsumerDead)
	require.Equal(t, bp+2, m.Stats().BackPressured, "each wait counts once")
	_, err = OpenMailbox(ctxT(t), m.Path(), sender.option())
	require.ErrorIs(t, err, ErrConsumerDead)

	// A heartbeat far in the future is as stale as one far in the past.
	sender.add(-3 * time.Second)
	require.ErrorIs(t, s.CheckConsumer(), ErrConsumerDead)

	// The consumer drains (and heartbeats at its clock's time).
	owner.set(sender.now())
	require.NotEmpty(t, mbDrainAll(t, m))
	require.NoError(t, s.CheckConsumer())
	require.Equal(t, owner.ms.Load(), s.ConsumerHeartbeat())
	require.NoError(t, s.Send(1, []byte("x")))

	// A waiting SendContext returns as soon as its context ends.
	mbFillRing(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.Equal(t, context.Canceled, s.SendContext(ctx, 1, []byte("x")))
}

// TestMailboxHeartbeatCycles: Drain reads the clock once per
// HeartbeatCycles calls; Heartbeat forces it.
// TestMailboxNoDemote: the owner's ring demotes the lines it releases by
// default, and not with NoDemote.
func TestMailboxNoDemote(t *testing.T) {
	require.True(t, mbNewForTest(t, MailboxConfig{}).Mailbox().Ring().Demotes(), "the default")
	require.False(t, mbNewForTest(t, MailboxConfig{NoDemote: true}).Mailbox().Ring().Demotes())
}

func TestMailboxHeartbeatCycles(t *testing.T) {
	clk := newMbClock(time.Now())
	m := mbNewForTest(t, MailboxConfig{HeartbeatCycles: 4}, clk.option())
	first := m.ConsumerHeartbeat()
	noop := func(*mailbox.Message) mailbox.Action { return mailbox.Continue }
	clk.add(time.Second)
	for range 3 {
		_, err := m.Drain(noop, 1)
		require.NoError(t, err)
		require.Equal(t, first, m.ConsumerHeartbeat())
	}
	_, err := m.Drain(noop, 1)
	require.NoError(t, err)
	require.Equal(t, first+1000, m.ConsumerHeartbeat())
	clk.add(time.Second)
	require.NoError(t, m.Heartbeat())
	require.Equal(t, first+2000, m.ConsumerHeartbeat())
	hb, err := m.File().HeartbeatMillis()
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
	late := newMbClock(time.Now().Add(time.Hour)).option()
	_, err = OpenMailbox(ctxT(t), ring.File().Path(), late)
	require.ErrorIs(t, err, ErrNotMailbox)
	require.ErrorIs(t, err, ErrKind)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = OpenMailbox(ctx, ring.File().Path())
	require.ErrorIs(t, err, ErrNotReady, "a fresh ring may still become a mailbox: wait, bounded by ctx")
	require.ErrorIs(t, err, context.DeadlineExceeded)

	f, err := Create(dir, "other", KindUserMin, []int{4096})
	require.NoError(t, err)
	defer f.Close()
	_, err = OpenMailbox(ctxT(t), f.Path())
	require.ErrorIs(t, err, ErrKind)

	_, err = OpenMailbox(ctxT(t), dir+"/missing")
	require.ErrorIs(t, err, os.ErrNotExist)

	cases := []struct {
		name   string
		slot   int
		offset int
		value  int64
		want   error
	}{
		{"version too new", MailboxHeaderSlot, MailboxVersionOffset, 2, ErrVersion},
		{"negative version", MailboxHeaderSlot, MailboxVersionOffset, -1, ErrVersion},
		{"max message 0", MailboxHeaderSlot, MailboxMaxMessageSizeOffset, 0, ErrCorrupt},
		{"max message > ring", MailboxHeaderSlot, MailboxMaxMessageSizeOffset, 1 << 40, ErrCorrupt},
		{"max message > half ring", MailboxHeaderSlot, MailboxMaxMessageSizeOffset, 60000, ErrCorrupt},
		{"max parts 0", MailboxHeaderSlot, MailboxMaxPartsOffset, 0, ErrCorrupt},
		{"max parts huge", MailboxHeaderSlot, MailboxMaxPartsOffset, 1 << 40, ErrCorrupt},
		{"consumer timeout 0", MailboxHeaderSlot, MailboxConsumerTimeoutOffset, 0, ErrCorrupt},
		{"consumer timeout negative", MailboxHeaderSlot, MailboxConsumerTimeoutOffset, -5, ErrCorrupt},
		{"unblock timeout huge", MailboxHeaderSlot, MailboxUnblockTimeoutOffset, 1 << 50, ErrCorrupt},
		{"closed", MailboxHeaderSlot, MailboxStateOffset, mailbox.StateClosedDiscard, mailbox.ErrClosed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := mbNewForTest(t, MailboxConfig{})
			slot, err := m.File().SpareSlot(c.slot)
			require.NoError(t, err)
			if c.offset == MailboxVersionOffset {
				binary.LittleEndian.PutUint32(slot[c.offset:], uint32(int32(c.value)))
			} else {
				binary.LittleEndian.PutUint64(slot[c.offset:], uint64(c.value))
			}
			_, err = OpenMailbox(ctxT(t), m.Path())
			require.ErrorIs(t, err, c.want)
		})
	}
}

func TestMailboxCreateErrors(t *testing.T) {
	dir := testDir(t)
	for _, cfg := range []MailboxConfig{
		{Capacity: 512}, {Capacity: 5000}, {ConsumerTimeout: time.Microsecond}, {ConsumerTimeout: -time.Second},
		{UnblockTimeout: 48 * time.Hour}, {HeartbeatCycles: -1}, {MaxParts: 1 << 30}, {MaxMessageSize: 1 << 20},
		{MaxMessageSize: -1},
	} {
		_, err := CreateMailbox(dir, "bad", cfg)
		require.ErrorIs(t, err, ErrArgument, "%+v", cfg)
	}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, ents, "nothing left behind")
	_, err = CreateMailbox(dir, "../x", MailboxConfig{})
	require.ErrorIs(t, err, ErrName)
	m, err := CreateMailbox(dir, "dup", MailboxConfig{})
	require.NoError(t, err)
	defer m.Close()
	_, err = CreateMailbox(dir, "dup", MailboxConfig{})
	require.ErrorIs(t, err, ErrExists)
}

// TestMailboxCountersFile: statistics mirrored into a counters file, read
// back through a read-only view as a stat tool would; Close frees them.
func TestMailboxCountersFile(t *testing.T) {
	dir := testDir(t)
	cf, err := CreateCounters(dir, "counters", 16, nil)
	require.NoError(t, err)
	defer cf.Close()
	m, err := CreateMailbox(dir, "mbox", MailboxConfig{Capacity: 4096, Counters: cf, UnblockTimeout: time.Millisecond})
	require.NoError(t, err)
	s := mbOpenForTest(t, m.Path())
	mbFillRing(t, s)
	require.NoError(t, m.Heartbeat())

	ro, err := OpenCounters(context.Background(), cf.File().Path())
	require.NoError(t, err)
	defer ro.Close()
	values := func() map[string]int64 {
		got := map[string]int64{}
		require.NoError(t, ro.Reader().ForEach(func(_ int, typeID int32, _ string, _ []byte, value int64) bool {
			got[counters.TypeName(typeID)] = value
			return true
		}))
		return got
	}
	v := values()
	require.Positive(t, v["mailbox-depth"])
	require.Equal(t, m.Stats().BackPressured, v["back-pressure"])
	require.Positive(t, v["back-pressure"])
	require.Equal(t, m.ConsumerHeartbeat(), v["heartbeat"])

	mbDrainAll(t, m)
	_, err = s.Claim(1, 8) // never committed: torn
	require.NoError(t, err)
	deadline := time.Now().Add(time.Minute) // hang guard only
	for m.Stats().Torn == 0 || m.Stats().Depth > 0 {
		require.True(t, time.Now().Before(deadline))
		mbDrainAll(t, m)
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, m.Heartbeat())
	v = values()
	require.Zero(t, v["mailbox-depth"])
	require.Equal(t, int64(1), v["unblocked-claims"])
	require.Zero(t, v["torn-messages"])

	require.NoError(t, m.Close())
	require.Empty(t, values(), "freed at Close")

	_, err = CreateMailbox(dir, "ro", MailboxConfig{Counters: ro})
	require.ErrorIs(t, err, ErrArgument, "a read-only counters file cannot hold the mailbox's counters")
}

// TestMailboxStress: three mappings of one file (the owner and two opened
// views, as three processes would have), two goroutines sending through
// each view (one with a MailboxSender) every shape of mbGen into a small
// ring; the owner checks exactly-once, per-sender order and content. Run
// it with -race.
func TestMailboxStress(t *testing.T) {
	const views, perView, count = 2, 2, 3000
	m := mbNewForTest(t, MailboxConfig{Capacity: 32768})
	var wg sync.WaitGroup
	errs := make(chan error, views*perView)
	for v := range views {
		s := mbOpenForTest(t, m.Path())
		for g := range perView {
			id := v*perView + g
			wg.Add(1)
			go func() {
				defer wg.Done()
				var snd *MailboxSender
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

// TestMailboxNoAllocations: the send paths, a refused send with a live
// consumer, and Drain with its heartbeat allocate nothing.
func TestMailboxNoAllocations(t *testing.T) {
	if mbRaceEnabled {
		t.Skip("the race detector allocates")
	}
	m := mbNewForTest(t, MailboxConfig{HeartbeatCycles: 1})
	s := mbOpenForTest(t, m.Path())
	snd := s.NewSender()
	small := make([]byte, 32)
	big := make([]byte, 9000)
	noop := func(*mailbox.Message) mailbox.Action { return mailbox.Continue }
	ctx := context.Background()
	drain := func() {
		if _, err := m.Drain(noop, ringbuf.NoLimit); err != nil {
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
		"SendTyped":  func() { _ = SendTyped(s, mbQuote{id: 1}); drain() },
		"idle Drain": drain,
		"Heartbeat":  func() { _ = m.Heartbeat() }, // fstat + guarded store included
	} {
		require.Zero(t, testing.AllocsPerRun(1000, fn), name)
	}
	mbFillRing(t, s)
	require.Zero(t, testing.AllocsPerRun(1000, func() { _ = s.Send(1, small) }), "refused with a live consumer")
}

// TestMailboxCorruptStateWord: a state word above the defined states (or
// negative), as a faulty process sharing the file could store, is
// corruption. It used to read as "closed": OpenMailbox and every send said
// mailbox.ErrClosed, Drain went on as if nothing had happened, and
// Close(Discard) returned 0 and nil, discarding nothing. Now OpenMailbox,
// every send refused for it, the owner's heartbeat (and so Drain's), Close
// and Close(Discard) report an error wrapping ErrCorrupt, and the queued
// message is still there.
func TestMailboxCorruptStateWord(t *testing.T) {
	for _, word := range []int64{3, 1 << 40, -1} {
		t.Run(fmt.Sprint(word), func(t *testing.T) {
			m := mbNewForTest(t, MailboxConfig{HeartbeatCycles: 1})
			s := mbOpenForTest(t, m.Path())
			require.NoError(t, s.Send(1, []byte("queued")))
			slot, err := m.File().SpareSlot(MailboxHeaderSlot)
			require.NoError(t, err)
			binary.LittleEndian.PutUint64(slot[MailboxStateOffset:], uint64(word))

			_, err = OpenMailbox(ctxT(t), m.Path())
			require.ErrorIs(t, err, ErrCorrupt, "OpenMailbox")
			sender := s.NewSender()
			for name, send := range map[string]func() error{
				"Send":             func() error { return s.Send(1, []byte("x")) },
				"SendParts":        func() error { return s.SendParts(1, []byte("x"), []byte("y")) },
				"SendContext":      func() error { return s.SendContext(ctxT(t), 1, []byte("x")) },
				"SendPartsContext": func() error { return s.SendPartsContext(ctxT(t), 1, []byte("x"), []byte("y")) },
				"Claim":            func() error { _, err := s.Claim(1, 8); return err },
				"ClaimParts":       func() error { _, err := s.ClaimParts(1, 8, 8); return err },
				"Sender.Send":      func() error { return sender.Send(1, []byte("x")) },
				"Sender.Claim":     func() error { _, err := sender.Claim(1, 8); return err },
				"Sender.SendContext": func() error {
					return sender.SendContext(ctxT(t), 1, []byte("x"))
				},
			} {
				err := send()
				require.ErrorIs(t, err, ErrCorrupt, name)
				require.NotErrorIs(t, err, mailbox.ErrClosed, name)
			}
			_, err = m.Drain(func(*mailbox.Message) mailbox.Action { return mailbox.Continue }, ringbuf.NoLimit)
			require.ErrorIs(t, err, ErrCorrupt, "Drain (heartbeat every drain)")
			require.ErrorIs(t, m.Heartbeat(), ErrCorrupt)
			n, err := m.Mailbox().Close(mailbox.Discard)
			require.ErrorIs(t, err, mailbox.ErrCorrupt, "Close(Discard)")
			require.Zero(t, n)
			require.Equal(t, word, m.state.Load(), "left as it is")
			require.Positive(t, m.Ring().Size(), "the queued message is still there")
			err = m.Close()
			require.ErrorIs(t, err, ErrCorrupt)
			require.ErrorIs(t, err, mailbox.ErrNotDrained)
		})
	}
}
