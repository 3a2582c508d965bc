package ipc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/buildtags"
	"github.com/dutyrt/duty/internal/childtest"
	"github.com/dutyrt/duty/internal/mailboxdef"
	"github.com/dutyrt/duty/internal/record"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/message"
	"github.com/dutyrt/duty/ringbuf"
)

// Cross-process mailbox tests re-execute the test binary with
// mailboxChildEnv set to a role. The role runs from init, before TestMain
// (main_test.go's dispatch belongs to the file layer's tests), and exits.
// Parameters come in DUTY_IPC_MB_* variables; results go to stdout.
const mailboxChildEnv = "DUTY_IPC_MAILBOX_CHILD"

func init() {
	if role := os.Getenv(mailboxChildEnv); role != "" {
		os.Exit(runMailboxChild(role))
	}
}

func runMailboxChild(role string) int {
	// A child never outlives its parent: the parent holds our stdin.
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(3)
	}()
	var err error
	switch role {
	case "sender":
		err = mbChildSender()
	case "claimer":
		err = mbChildClaimer()
	case "half":
		err = mbChildHalf()
	case "consumer":
		err = mbChildConsumer()
	case "countstop":
		err = mbChildCountStop()
	case "stalled":
		err = mbChildStalled()
	case "waker":
		err = mbChildWaker()
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mailbox child", role, "failed:", err)
		return 1
	}
	return 0
}

func mbOpenChild() (*mailbox.Mailbox, *MailboxFile, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return OpenMailbox(ctx, os.Getenv("DUTY_IPC_MB_PATH"))
}

// mbChildSender sends DUTY_IPC_MB_COUNT messages of every shape
// (mbShape) as sender DUTY_IPC_MB_SENDER: even senders through a
// mailbox.Sender, odd ones through the Mailbox's own methods. With
// DUTY_IPC_MB_UNTIL_CLOSED=1 a send refused with mailbox.ErrClosed ends it
// without an error: it prints "closed <seq>", the sequence refused (every
// one before it was accepted).
func mbChildSender() error {
	m, f, err := mbOpenChild()
	if err != nil {
		return err
	}
	defer f.Close()
	sender, count := envInt("DUTY_IPC_MB_SENDER"), envInt("DUTY_IPC_MB_COUNT")
	untilClosed := os.Getenv("DUTY_IPC_MB_UNTIL_CLOSED") == "1"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var s *mailbox.Sender
	if sender%2 == 0 {
		s = m.NewSender()
	}
	var g mbGen
	for seq := range uint64(count) {
		if err := g.send(ctx, m, s, sender, seq); err != nil {
			if untilClosed && err == mailbox.ErrClosed {
				fmt.Printf("closed %d\n", seq)
				return nil
			}
			return fmt.Errorf("sender %d seq %d: %w", sender, seq, err)
		}
	}
	return nil
}

// mbChildClaimer claims a plain message, fills half of it, says so and
// waits to be killed: a sender that dies between claim and commit.
func mbChildClaimer() error {
	m, _, err := mbOpenChild()
	if err != nil {
		return err
	}
	var c mailbox.Claim
	for spins := 0; ; spins++ {
		if c, err = m.Claim(mbDeadTypeID, 100); err != mailbox.ErrBackPressured {
			break
		}
		backoff(spins)
	}
	if err != nil {
		return err
	}
	copy(c.Payload(), "half written, never committed")
	fmt.Println("claimed")
	time.Sleep(time.Hour)
	return errors.New("not killed")
}

// mbChildHalf claims the records of a fragmented message as one batch,
// as the mailbox does, writes the first half of them (frame headers and
// body fragments, the layout of internal/mailboxframe), says so and waits to be
// killed: a sender that dies half-way through a fragmented message.
func mbChildHalf() error {
	m, mf, err := mbOpenChild()
	if err != nil {
		return err
	}
	body := envInt("DUTY_IPC_MB_BODY")
	frag := m.MaxPartsClaimLength() // body bytes per record
	count := (body + frag - 1) / frag
	size := 0
	for i := range count {
		size += ringbuf.RecordSize(mailboxdef.HeaderLength + min(frag, body-i*frag))
	}
	var b ringbuf.Batch
	for spins := 0; ; spins++ {
		if b, err = mf.ring.TryClaimBatch(size); err != ringbuf.ErrFull {
			break
		}
		backoff(spins)
	}
	if err != nil {
		return err
	}
	key := mf.ring.NextCorrelationID()
	le := binary.LittleEndian
	for i := range count / 2 {
		n := min(frag, body-i*frag)
		rec, err := b.Append(record.FlagFramed|mbDeadTypeID, mailboxdef.HeaderLength+n)
		if err != nil {
			return err
		}
		le.PutUint64(rec[mailboxdef.KeyOffset:], uint64(key))
		le.PutUint64(rec[mailboxdef.SequenceOffset:], 0)
		le.PutUint32(rec[mailboxdef.IndexOffset:], uint32(i))
		le.PutUint32(rec[mailboxdef.CountOffset:], uint32(count))
		le.PutUint32(rec[mailboxdef.BodyLengthOffset:], uint32(body))
		le.PutUint32(rec[mailboxdef.PartsOffset:], 1)
		for j := range rec[mailboxdef.HeaderLength:] {
			rec[mailboxdef.HeaderLength+j] = byte(j)
		}
	}
	fmt.Printf("half %d of %d records\n", count/2, count)
	time.Sleep(time.Hour)
	return errors.New("not killed")
}

// mbChildConsumer creates a mailbox (consumer timeout
// DUTY_IPC_MB_TIMEOUT_MS), says "ready", then drains for ever, printing
// "got <n>" for each message; it waits to be killed.
func mbChildConsumer() error {
	timeout := time.Duration(envInt("DUTY_IPC_MB_TIMEOUT_MS")) * time.Millisecond
	opts := []Option{WithConsumerTimeout(timeout)}
	if os.Getenv("DUTY_IPC_MB_REPLACE") == "1" {
		opts = append(opts, WithReplaceStale())
	}
	m, _, err := CreateMailbox(os.Getenv("DUTY_IPC_MB_DIR"), os.Getenv("DUTY_IPC_MB_NAME"),
		mailbox.Config{Capacity: 4096, HeartbeatCycles: 1}, opts...)
	if err != nil {
		return err
	}
	fmt.Println("ready")
	out := bufio.NewWriter(os.Stdout)
	for {
		n, err := m.Drain(func(msg *mailbox.Message) mailbox.Action {
			fmt.Fprintf(out, "got %s\n", msg.Payload())
			return mailbox.Continue
		}, 16)
		if err != nil {
			return err
		}
		if n > 0 {
			if err := out.Flush(); err != nil {
				return err
			}
		} else {
			time.Sleep(100 * time.Microsecond)
		}
	}
}

// mbChildCountStop creates DUTY_IPC_MB_DIR/DUTY_IPC_MB_NAME (a 16 KiB
// ring, a consumer timeout of an hour: only its process tells its death),
// drains exactly DUTY_IPC_MB_COUNT messages, each carrying its sequence
// number in its first 8 bytes (checked), reports "consumed N" once its
// drains have returned (its position stored), and then drains no more
// while it lives: a consumer that dies with a known count consumed.
func mbChildCountStop() error {
	m, _, err := CreateMailbox(os.Getenv("DUTY_IPC_MB_DIR"), os.Getenv("DUTY_IPC_MB_NAME"),
		mailbox.Config{Capacity: 16384, HeartbeatCycles: 1}, WithConsumerTimeout(time.Hour))
	if err != nil {
		return err
	}
	fmt.Println("ready")
	want := envInt("DUTY_IPC_MB_COUNT")
	got := 0
	var bad error
	for got < want {
		n, err := m.Drain(func(msg *mailbox.Message) mailbox.Action {
			if seq := binary.LittleEndian.Uint64(msg.Payload()); seq != uint64(got) && bad == nil {
				bad = fmt.Errorf("message %d carries sequence %d", got, seq)
			}
			got++
			return mailbox.Continue
		}, want-got)
		if err != nil {
			return err
		}
		if bad != nil {
			return bad
		}
		if n == 0 {
			time.Sleep(100 * time.Microsecond)
		}
	}
	fmt.Println("consumed", got)
	for {
		time.Sleep(time.Hour) // alive, holding the file's lock, draining nothing
	}
}

// mbDeadTypeID is the type id of the messages dying children leave torn:
// they must never be delivered.
const mbDeadTypeID = 99

// mbGen makes and checks the known sequence of each sender: message seq
// of sender s has type 100+s and a shape chosen by seq%20 (plain Sends of
// varying lengths, multipart messages in one record and spanning records,
// fragmented large Sends, Claim and ClaimParts); its first part starts with
// the sender and the sequence, every other byte is a function of them.
type mbGen struct {
	buf   [4][]byte
	parts [][]byte
}

const (
	mbKindSend = iota
	mbKindParts
	mbKindLarge
	mbKindClaim
	mbKindBigParts
	mbKindClaimParts
)

func mbShape(seq uint64) (kind int, lens []int) {
	switch k := seq % 20; {
	case k < 12:
		return mbKindSend, []int{16 + int(seq*7%200)}
	case k < 16:
		n := 2 + int(seq%3)
		lens = make([]int, n)
		lens[0] = 16
		for i := 1; i < n; i++ {
			lens[i] = int((seq + uint64(i)) * 13 % 300) // some are empty
		}
		return mbKindParts, lens
	case k == 16:
		return mbKindLarge, []int{9000 + int(seq%5000)}
	case k == 17:
		return mbKindClaim, []int{40}
	case k == 18:
		return mbKindBigParts, []int{4000, 4000 + int(seq%100), 100}
	default:
		return mbKindClaimParts, []int{16, int(seq % 64)}
	}
}

// fill writes the content of part i of message (sender, seq) into p.
func mbFill(p []byte, sender int, seq uint64, i int) {
	for j := range p {
		p[j] = byte(uint64(sender)*131 + seq*31 + uint64(i)*7 + uint64(j))
	}
	if i == 0 {
		binary.LittleEndian.PutUint32(p[0:], uint32(sender))
		binary.LittleEndian.PutUint64(p[4:], seq)
	}
}

// make returns the parts of message (sender, seq) in g's buffers.
func (g *mbGen) make(sender int, seq uint64) (int, [][]byte) {
	kind, lens := mbShape(seq)
	g.parts = g.parts[:0]
	for i, n := range lens {
		if cap(g.buf[i]) < n {
			g.buf[i] = make([]byte, n)
		}
		p := g.buf[i][:n]
		mbFill(p, sender, seq, i)
		g.parts = append(g.parts, p)
	}
	return kind, g.parts
}

func (g *mbGen) send(ctx context.Context, m *mailbox.Mailbox, s *mailbox.Sender, sender int, seq uint64) error {
	kind, parts := g.make(sender, seq)
	typeID := int32(100 + sender)
	switch kind {
	case mbKindSend, mbKindLarge:
		if s != nil {
			return s.SendContext(ctx, typeID, parts[0])
		}
		return m.SendContext(ctx, typeID, parts[0])
	case mbKindParts, mbKindBigParts:
		if s != nil {
			return s.SendPartsContext(ctx, typeID, parts...)
		}
		return m.SendPartsContext(ctx, typeID, parts...)
	case mbKindClaim:
		for spins := 0; ; spins++ {
			var c mailbox.Claim
			var err error
			if s != nil {
				c, err = s.Claim(typeID, len(parts[0]))
			} else {
				c, err = m.Claim(typeID, len(parts[0]))
			}
			if err == nil {
				copy(c.Payload(), parts[0])
				return c.Commit()
			}
			if err != mailbox.ErrBackPressured {
				return err
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			backoff(spins)
		}
	default:
		lens := []int{len(parts[0]), len(parts[1])}
		for spins := 0; ; spins++ {
			var c mailbox.PartsClaim
			var err error
			if s != nil {
				c, err = s.ClaimParts(typeID, lens...)
			} else {
				c, err = m.ClaimParts(typeID, lens...)
			}
			if err == nil {
				for i := range parts {
					copy(c.Part(i), parts[i])
				}
				return c.Commit()
			}
			if err != mailbox.ErrBackPressured {
				return err
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			backoff(spins)
		}
	}
}

// mbChecker checks messages of mbGen senders: exactly once, in order per
// sender, every part intact.
type mbChecker struct {
	next []uint64
	n    int
	err  error
	g    mbGen
}

func (c *mbChecker) handle(msg *mailbox.Message) mailbox.Action {
	if c.err != nil {
		return mailbox.Continue
	}
	c.err = c.check(msg)
	c.n++
	return mailbox.Continue
}

func (c *mbChecker) check(msg *mailbox.Message) error {
	sender := int(msg.TypeID()) - 100
	if sender < 0 || sender >= len(c.next) {
		return fmt.Errorf("message of type %d (torn or foreign) delivered", msg.TypeID())
	}
	p0 := msg.Payload()
	if len(p0) < 12 {
		return fmt.Errorf("sender %d: first part of %d bytes", sender, len(p0))
	}
	if got := int(binary.LittleEndian.Uint32(p0)); got != sender {
		return fmt.Errorf("type %d carries sender %d", msg.TypeID(), got)
	}
	seq := binary.LittleEndian.Uint64(p0[4:])
	if seq != c.next[sender] {
		return fmt.Errorf("sender %d: seq %d, want %d (lost, duplicated or reordered)", sender, seq, c.next[sender])
	}
	_, want := c.g.make(sender, seq)
	if msg.NumParts() != len(want) {
		return fmt.Errorf("sender %d seq %d: %d parts, want %d", sender, seq, msg.NumParts(), len(want))
	}
	for i, w := range want {
		if string(msg.Part(i)) != string(w) {
			return fmt.Errorf("sender %d seq %d: part %d differs (%d bytes, want %d)", sender, seq, i, len(msg.Part(i)), len(w))
		}
	}
	c.next[sender]++
	return nil
}

// startMailboxChild starts the test binary in a mailbox role with env
// added; the child is killed and reaped at the end of the test if still
// running (only this test's own children are ever signalled).
func startMailboxChild(t *testing.T, role string, env ...string) *proc {
	t.Helper()
	return childtest.Start(t, mailboxChildEnv, role, env...)
}

func mbPathEnv(path string) string { return "DUTY_IPC_MB_PATH=" + path }

func mbStartSenders(t *testing.T, path string, first, n, count int) []*proc {
	var ps []*proc
	for s := first; s < first+n; s++ {
		ps = append(ps, startMailboxChild(t, "sender", mbPathEnv(path),
			"DUTY_IPC_MB_SENDER="+strconv.Itoa(s), "DUTY_IPC_MB_COUNT="+strconv.Itoa(count)))
	}
	return ps
}

// mbDrainUntil drains m into c until c has seen total messages, with a
// generous hang guard; onIdle runs on every idle drain.
func mbDrainUntil(t *testing.T, m *mailbox.Mailbox, c *mbChecker, total int, onIdle func()) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute) // hang guard only
	for idle := 0; c.n < total; {
		n, err := m.Drain(c.handle, 256)
		require.NoError(t, err)
		require.NoError(t, c.err)
		if n > 0 {
			idle = 0
			continue
		}
		if onIdle != nil {
			onIdle()
		}
		idle++
		backoff(idle)
		if idle%1000 == 0 {
			require.True(t, time.Now().Before(deadline), "received %d of %d: %v", c.n, total, c.next)
		}
	}
}

// TestCrossProcessMailbox: four child processes each send 50,000 messages
// of every shape (plain, multipart in one record and across records,
// fragmented, claimed) to the parent's mailbox; every message arrives
// exactly once, in per-sender order, whole and intact, and the statistics
// in the file add up.
func TestCrossProcessMailbox(t *testing.T) {
	const senders, count = 4, 50_000
	m, mf, err := CreateMailbox(testDir(t), "mbox", mailbox.Config{})
	require.NoError(t, err)
	defer mf.Close()
	ps := mbStartSenders(t, mf.File.Path(), 0, senders, count)
	c := &mbChecker{next: make([]uint64, senders)}
	mbDrainUntil(t, m, c, senders*count, nil)
	for s, p := range ps {
		require.NoError(t, p.Wait(t), "sender %d: %s", s, p.Stderr)
		require.Equal(t, uint64(count), c.next[s])
	}
	n, err := m.Drain(c.handle, ringbuf.NoLimit)
	require.NoError(t, err)
	require.Zero(t, n, "nothing more")
	st := m.Stats()
	require.Equal(t, int64(senders*count), st.Delivered)
	require.Zero(t, st.Torn)
	require.Zero(t, st.Corrupt)
	require.Zero(t, st.Depth)
	t.Logf("back-pressured sends (all senders, from the file): %d; max depth %d bytes", st.BackPressured, st.MaxDepth)
}

// TestCrossProcessMailboxClose: the owner's Close(Drain) lives in the
// mailbox's shared words in the file, so it reaches senders in other
// processes: two children streaming into the parent's mailbox stop at
// their first mailbox.ErrClosed (whatever send or claim they are in, a
// waiting one included); every message they had sent before it is delivered by the
// drains after the close, exactly once and in order; and each child's one
// refused send is counted in the file (RefusedClosed, summed over the
// processes).
func TestCrossProcessMailboxClose(t *testing.T) {
	const senders = 2
	m, mf, err := CreateMailbox(testDir(t), "mbox", mailbox.Config{})
	require.NoError(t, err)
	defer mf.Close()
	var ps []*proc
	for s := range senders {
		ps = append(ps, startMailboxChild(t, "sender", mbPathEnv(mf.File.Path()), "DUTY_IPC_MB_UNTIL_CLOSED=1",
			"DUTY_IPC_MB_SENDER="+strconv.Itoa(s), "DUTY_IPC_MB_COUNT="+strconv.Itoa(1<<40)))
	}
	c := &mbChecker{next: make([]uint64, senders)}
	for c.next[0] < 100 || c.next[1] < 100 { // both are streaming
		mbDrainUntil(t, m, c, c.n+1, nil)
	}
	_, err = m.Close(mailbox.Drain)
	require.NoError(t, err)
	refused := make([]uint64, senders)
	for s, p := range ps {
		line := p.Line(t)
		_, err := fmt.Sscanf(line, "closed %d", &refused[s])
		require.NoError(t, err, "sender %d said %q; stderr: %s", s, line, p.Stderr)
		require.NoError(t, p.Wait(t), "sender %d: %s", s, p.Stderr)
	}
	// The children have exited: everything they sent is in the ring.
	for {
		n, err := m.Drain(c.handle, ringbuf.NoLimit)
		require.NoError(t, err)
		require.NoError(t, c.err)
		if n == 0 {
			break
		}
	}
	require.Equal(t, refused, c.next, "every message accepted before the close, and no other")
	t.Logf("the senders were refused at sequences %v", refused)
	st := m.Stats()
	require.Equal(t, int64(refused[0]+refused[1]), st.Delivered)
	require.Equal(t, int64(senders), st.RefusedClosed, "one refusal per child, counted in the file")
	require.Zero(t, st.Depth)
	require.Zero(t, st.Torn+st.Corrupt)
	require.True(t, st.Closed)
	require.NoError(t, mf.Close(), "nothing left queued")
}

// TestCrossProcessMailboxSenderKilledMidClaim: while two children stream,
// a third claims a message and is SIGKILLed before committing. The
// consumer waits at the claim for its unblock timeout, drops it (counted
// once in Stats.Torn), and every other message arrives.
func TestCrossProcessMailboxSenderKilledMidClaim(t *testing.T) {
	mbKilledSender(t, "claimer")
}

// TestCrossProcessMailboxSenderKilledMidFragment: the same with a child
// killed half-way through writing a fragmented message: the message is
// dropped whole (never delivered in part), counted once as torn, and the
// stream flows.
func TestCrossProcessMailboxSenderKilledMidFragment(t *testing.T) {
	mbKilledSender(t, "half", "DUTY_IPC_MB_BODY=20000")
}

func mbKilledSender(t *testing.T, role string, env ...string) {
	const count = 20_000
	// Far above any scheduling delay of a live sender between its claim
	// and its commit on a loaded machine; the test waits for it once.
	const unblock = 2 * time.Second
	m, mf, err := CreateMailbox(testDir(t), "mbox", mailbox.Config{UnblockTimeout: unblock})
	require.NoError(t, err)
	defer mf.Close()
	ps := mbStartSenders(t, mf.File.Path(), 0, 2, count)
	c := &mbChecker{next: make([]uint64, 2)}
	mbDrainUntil(t, m, c, 1000, nil) // the stream is flowing

	dying := startMailboxChild(t, role, append(env, mbPathEnv(mf.File.Path()))...)
	said := dying.LineAsync()
	killed := false
	mbDrainUntil(t, m, c, 2*count, func() {
		if killed {
			return
		}
		select {
		case line := <-said:
			require.NotEmpty(t, line, "child stderr: %s", dying.Stderr)
			dying.Kill(t)
			require.True(t, dying.Cmd.ProcessState.Sys().(syscall.WaitStatus).Signaled())
			killed = true
		default:
		}
	})
	if !killed { // the senders finished before the claim
		select {
		case line := <-said:
			require.NotEmpty(t, line, "child stderr: %s", dying.Stderr)
		case <-time.After(time.Minute): // hang guard only
			t.Fatalf("the %s child never claimed; stderr: %s", role, dying.Stderr)
		}
		dying.Kill(t)
	}
	for s, p := range ps {
		require.NoError(t, p.Wait(t), "sender %d: %s", s, p.Stderr)
	}
	// The dead claim sits at (or ahead of) the head: wait for the unblock.
	deadline := time.Now().Add(time.Minute) // hang guard only
	for m.Stats().Torn == 0 || m.Stats().Depth > 0 {
		require.True(t, time.Now().Before(deadline), "never unblocked: %+v", m.Stats())
		_, err := m.Drain(c.handle, ringbuf.NoLimit)
		require.NoError(t, err)
		require.NoError(t, c.err)
		time.Sleep(time.Millisecond)
	}
	require.Equal(t, []uint64{count, count}, c.next)
	st := m.Stats()
	require.Equal(t, int64(1), st.Torn, "exactly the dead sender's message")
	require.Zero(t, st.Corrupt)
	require.Equal(t, int64(2*count), st.Delivered)
	require.Equal(t, mf.ring.ProducerPosition(), mf.ring.ConsumerPosition())
}

// TestCrossProcessMailboxConsumerKilled: the consumer is a child; the
// parent sends to it, sees it drain, SIGKILLs it, and then gets
// mailbox.ErrConsumerDead (wrapping ErrOwnerDead) once the ring is full
// and the consumer timeout has passed: from SendContext, from a spinning
// Send, a spinning Claim, and from OpenMailbox. Never a hang.
func TestCrossProcessMailboxConsumerKilled(t *testing.T) {
	const timeout = 500 * time.Millisecond
	dir := testDir(t)
	cons := startMailboxChild(t, "consumer", "DUTY_IPC_MB_DIR="+dir, "DUTY_IPC_MB_NAME=cons",
		"DUTY_IPC_MB_TIMEOUT_MS="+strconv.Itoa(int(timeout.Milliseconds())))
	require.Equal(t, "ready", cons.Line(t))
	path := filepath.Join(dir, "cons")
	m, mf, err := OpenMailbox(ctxT(t), path)
	require.NoError(t, err)
	defer mf.Close()
	require.Equal(t, timeout, mf.consumerTimeout())
	require.NoError(t, m.SendContext(ctxT(t), 1, []byte("hello")))
	require.Equal(t, "got hello", cons.Line(t), "the consumer is alive and draining")

	cons.Kill(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // hang guard only
	defer cancel()
	msg := make([]byte, 200)
	var sent int
	for {
		err = m.SendContext(ctx, 1, msg)
		if err != nil {
			break
		}
		sent++
	}
	require.ErrorIs(t, err, mailbox.ErrConsumerDead, "after %d sends", sent)
	require.ErrorIs(t, err, ErrOwnerDead, "the process is gone: %v", err)
	require.NotErrorIs(t, err, context.DeadlineExceeded)
	t.Logf("%d sends accepted before the ring filled; then: %v", sent, err)

	for spins := 0; ; spins++ {
		err = m.Send(1, msg)
		if err != mailbox.ErrBackPressured {
			break
		}
		require.Less(t, spins, 1000, "a spinning Send must report the dead consumer")
	}
	require.ErrorIs(t, err, mailbox.ErrConsumerDead)
	require.ErrorIs(t, err, ErrOwnerDead)
	require.Positive(t, m.Stats().BackPressured)

	for spins := 0; ; spins++ {
		_, err = m.Claim(1, len(msg))
		if err != mailbox.ErrBackPressured {
			break
		}
		require.Less(t, spins, 1000, "a spinning Claim must report the dead consumer")
	}
	require.ErrorIs(t, err, mailbox.ErrConsumerDead)

	_, _, err = OpenMailbox(ctxT(t), path)
	require.ErrorIs(t, err, mailbox.ErrConsumerDead)
	require.ErrorIs(t, err, ErrOwnerDead)
}

// TestCrossProcessMailboxConsumerKilledKnownAtOnce: the consumer's
// heartbeat timeout is an hour, so only its process can tell that it is
// gone. After a SIGKILL the parent's sends fill the ring, and the first
// refusal reports mailbox.ErrConsumerDead (wrapping ErrOwnerDead) instead
// of back-pressure until the timeout; the sender's view is stale; and a
// new consumer created with WithReplaceStale takes the file over at once,
// although the dead owner's file heartbeat is still fresh.
func TestCrossProcessMailboxConsumerKilledKnownAtOnce(t *testing.T) {
	dir := testDir(t)
	cons := startMailboxChild(t, "consumer", "DUTY_IPC_MB_DIR="+dir, "DUTY_IPC_MB_NAME=cons",
		"DUTY_IPC_MB_TIMEOUT_MS="+strconv.Itoa(int(time.Hour.Milliseconds())))
	require.Equal(t, "ready", cons.Line(t))
	path := filepath.Join(dir, "cons")
	m, mf, err := OpenMailbox(ctxT(t), path)
	require.NoError(t, err)
	defer mf.Close()
	require.NoError(t, m.SendContext(ctxT(t), 1, []byte("hello")))
	require.Equal(t, "got hello", cons.Line(t), "the consumer is alive and draining")
	require.NoError(t, mf.CheckConsumer(), "a live consumer")
	require.False(t, mf.stale(), "a live consumer's mailbox")

	cons.Kill(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // hang guard only
	defer cancel()
	msg := make([]byte, 200)
	var sent int
	for {
		if err = m.SendContext(ctx, 1, msg); err != nil {
			break
		}
		sent++
	}
	require.ErrorIs(t, err, mailbox.ErrConsumerDead, "after %d sends", sent)
	require.ErrorIs(t, err, ErrOwnerDead, "the process is gone: %v", err)
	require.NotErrorIs(t, err, context.DeadlineExceeded)
	require.NotContains(t, err.Error(), "running=true")
	require.True(t, mf.stale(), "the consumer's process is gone")
	_, _, err = OpenMailbox(ctxT(t), path)
	require.ErrorIs(t, err, mailbox.ErrConsumerDead, "a new sender is told at once")

	l, err := mf.Liveness(time.Now(), 0)
	require.NoError(t, err)
	require.Equal(t, OwnerDead, l.State, "a free lock and no process: %s", l.describe())
	m2, mf2, err := CreateMailbox(dir, "cons", mailbox.Config{Capacity: 4096}, WithReplaceStale())
	require.NoError(t, err, "a dead owner's file is replaced at once")
	defer mf2.Close()
	require.NoError(t, m2.Heartbeat(), "the new view is the consumer")
	require.ErrorIs(t, m.Send(1, msg), mailbox.ErrConsumerDead, "the old view stays dead")
}

// TestCrossProcessMailboxConsumerKilledBeforeRingFull: a sender that
// keeps sending to a SIGKILLed consumer learns of its death while the
// ring still has room (within two eighths of the ring, the probe that
// each send crossing an eighth makes once the consumer's position stopped
// moving), with no back-pressure on the way; every send after it is
// refused at once on every path; and every message is accounted for: the
// ones the child consumed (its own count), the ones refused to the sender,
// and the ones accepted after the death, counted in Stats.Stranded, add up
// to what was sent. The consumer timeout is an hour: no heartbeat decides.
func TestCrossProcessMailboxConsumerKilledBeforeRingFull(t *testing.T) {
	dir := testDir(t)
	const consumed = 100
	cons := startMailboxChild(t, "countstop", "DUTY_IPC_MB_DIR="+dir, "DUTY_IPC_MB_NAME=cons",
		"DUTY_IPC_MB_COUNT="+strconv.Itoa(consumed))
	require.Equal(t, "ready", cons.Line(t))
	m, mf, err := OpenMailbox(ctxT(t), filepath.Join(dir, "cons"))
	require.NoError(t, err)
	defer mf.Close()
	capacity := m.Capacity()
	msg := make([]byte, 100)
	recordSize := record.Size(len(msg))
	sent := 0
	next := func() []byte {
		binary.LittleEndian.PutUint64(msg, uint64(sent))
		sent++
		return msg
	}
	for range consumed {
		require.NoError(t, m.SendContext(ctxT(t), 1, next()))
	}
	require.Equal(t, "consumed "+strconv.Itoa(consumed), cons.Line(t))
	require.Zero(t, m.Stats().Depth, "the child consumed everything sent so far")
	require.NoError(t, mf.CheckConsumer(), "a live consumer")

	cons.Kill(t)
	accepted := 0
	for {
		if err = m.Send(1, next()); err != nil {
			break
		}
		accepted++
		require.Less(t, accepted*recordSize, capacity, "the ring filled before the sender knew")
	}
	t.Logf("%d sends accepted after the kill (records of %d bytes, ring of %d): %v", accepted, recordSize, capacity, err)
	require.NotEqual(t, mailbox.ErrBackPressured, err, "never full: known before")
	require.ErrorIs(t, err, mailbox.ErrConsumerDead)
	require.ErrorIs(t, err, ErrOwnerDead, "the process is gone: %v", err)
	require.LessOrEqual(t, accepted*recordSize, 2*capacity/8+recordSize,
		"known within two eighths of the ring of sending after the death")
	refused := 1

	// Every path refuses at once, with the same account.
	again := m.Send(1, next())
	require.Same(t, err, again, "said once, then returned as it is")
	refused++
	require.ErrorIs(t, m.SendParts(1, next(), []byte("b")), mailbox.ErrConsumerDead)
	refused++
	require.ErrorIs(t, m.SendContext(ctxT(t), 1, next()), mailbox.ErrConsumerDead)
	refused++
	_, err = m.Claim(1, 8)
	require.ErrorIs(t, err, mailbox.ErrConsumerDead)
	s := m.NewSender()
	require.ErrorIs(t, s.Send(1, next()), mailbox.ErrConsumerDead)
	refused++
	require.ErrorIs(t, m.Err(), mailbox.ErrConsumerDead)
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = m.Send(1, msg) }), "a refusal allocates nothing")

	st := m.Stats()
	require.Equal(t, int64(accepted), st.Stranded, "what was accepted after the death is stranded")
	require.Equal(t, accepted*recordSize, st.Depth)
	require.True(t, st.Closed, "it refuses sends")
	require.Equal(t, sent, consumed+refused+int(st.Stranded), "consumed + refused + stranded = sent")
	ro, err := OpenReadOnly(ctxT(t), filepath.Join(dir, "cons"))
	require.NoError(t, err)
	info, err := InspectMailbox(ro)
	require.NoError(t, err)
	require.NoError(t, ro.Close())
	require.Equal(t, MailboxInfo{Version: mailboxLayoutVersion, Closed: true, ConsumerDead: true, Stranded: st.Stranded}, info,
		"any process reads the same account from the file")
	require.NoError(t, mf.Close())
	require.Equal(t, st.Stranded, m.Stats().Stranded, "kept once the view is closed")
}

// TestCrossProcessMailboxConsumerStoppedIsNotDead: a SIGSTOPped consumer
// is hung, not dead: its process exists and holds the file's lock, so a
// sender's probe finds it alive (its heartbeat timeout, an hour here,
// decides), its view is not stale, its file is not removable, and once it
// resumes it drains what was sent meanwhile.
func TestCrossProcessMailboxConsumerStoppedIsNotDead(t *testing.T) {
	dir := testDir(t)
	cons := startMailboxChild(t, "consumer", "DUTY_IPC_MB_DIR="+dir, "DUTY_IPC_MB_NAME=cons",
		"DUTY_IPC_MB_TIMEOUT_MS="+strconv.Itoa(int(time.Hour.Milliseconds())))
	require.Equal(t, "ready", cons.Line(t))
	path := filepath.Join(dir, "cons")
	m, mf, err := OpenMailbox(ctxT(t), path)
	require.NoError(t, err)
	defer mf.Close()

	require.NoError(t, cons.Cmd.Process.Signal(syscall.SIGSTOP))
	defer func() { _ = cons.Cmd.Process.Signal(syscall.SIGCONT) }()
	msg := make([]byte, 200)
	for spins := 0; ; spins++ {
		err = m.Send(1, msg)
		if err != nil {
			break
		}
		require.Less(t, spins, 1000, "a 4 KiB ring holds fewer")
	}
	require.Equal(t, mailbox.ErrBackPressured, err, "a stopped consumer is back-pressure, not death")
	require.NoError(t, mf.CheckConsumer(), "its process exists")
	require.False(t, mf.stale())
	require.ErrorIs(t, RemoveIfStale(path), ErrOwnerAlive)
	_, _, err = CreateMailbox(dir, "cons", mailbox.Config{Capacity: 4096}, WithReplaceStale())
	require.ErrorIs(t, err, ErrOwnerAlive)

	require.NoError(t, cons.Cmd.Process.Signal(syscall.SIGCONT))
	require.NoError(t, m.SendContext(ctxT(t), 1, []byte("after")), "it drains again")
	for {
		if line := cons.Line(t); line == "got after" {
			break
		}
	}
}

// TestCrossProcessRegistryReResolves: a message.Registry over the
// directory looks a consumer child up; the child is SIGKILLed and a new
// one takes its file over with WithReplaceStale; the next Lookups return
// the new consumer's mailbox (the old one is stale), which delivers.
func TestCrossProcessRegistryReResolves(t *testing.T) {
	dir := testDir(t)
	env := []string{"DUTY_IPC_MB_DIR=" + dir, "DUTY_IPC_MB_NAME=peer", "DUTY_IPC_MB_TIMEOUT_MS=10000"}
	first := startMailboxChild(t, "consumer", env...)
	require.Equal(t, "ready", first.Line(t))
	reg := message.NewRegistry(Dir(dir))
	defer func() { require.NoError(t, reg.Close()) }()
	a, err := message.AddressOf("peer")
	require.NoError(t, err)
	old, err := reg.Lookup(ctxT(t), a)
	require.NoError(t, err)
	require.NoError(t, old.SendContext(ctxT(t), 1, []byte("one")))
	require.Equal(t, "got one", first.Line(t))

	first.Kill(t)
	second := startMailboxChild(t, "consumer", append(env, "DUTY_IPC_MB_REPLACE=1")...)
	require.Equal(t, "ready", second.Line(t), "the restarted consumer replaces the dead one's file")
	deadline := time.Now().Add(20 * time.Second) // hang guard only
	var cur *mailbox.Mailbox
	for {
		cur, err = reg.Lookup(ctxT(t), a)
		require.NoError(t, err)
		if cur != old {
			break
		}
		require.True(t, time.Now().Before(deadline), "the registry still returns the dead consumer's mailbox")
		time.Sleep(10 * time.Millisecond)
	}
	require.NoError(t, cur.SendContext(ctxT(t), 1, []byte("two")))
	require.Equal(t, "got two", second.Line(t))
	again, err := reg.Lookup(ctxT(t), a)
	require.NoError(t, err)
	require.Same(t, cur, again, "a live mailbox is not opened again")
	if !buildtags.Race { // the race detector allocates
		ctx := ctxT(t)
		require.Zero(t, testing.AllocsPerRun(1000, func() {
			if _, err := reg.Lookup(ctx, a); err != nil {
				t.Fatal(err)
			}
		}), "a lookup of a file mailbox, staleness check included")
	}
}

// failingDir is a MailboxDir that reports each failed OpenMailbox on
// failed (without blocking), so a test knows a Lookup is under way.
type failingDir struct {
	MailboxDir
	failed chan error
}

func (d failingDir) OpenMailbox(ctx context.Context, name string) (*mailbox.Mailbox, io.Closer, error) {
	mb, c, err := d.MailboxDir.OpenMailbox(ctx, name)
	if err != nil {
		select {
		case d.failed <- err:
		default:
		}
	}
	return mb, c, err
}

// TestCrossProcessRegistryLookupWaitsForRestart: a Lookup of a peer whose
// consumer was SIGKILLed, made before its restart, finds the dead
// consumer's mailbox (ErrConsumerDead) and, its context having a
// deadline, waits: once the restarted consumer has replaced the file, the
// Lookup returns the new mailbox, which delivers. Without a deadline, and
// for a name the registry never resolved, a Lookup fails at once.
func TestCrossProcessRegistryLookupWaitsForRestart(t *testing.T) {
	dir := testDir(t)
	env := []string{"DUTY_IPC_MB_DIR=" + dir, "DUTY_IPC_MB_NAME=peer", "DUTY_IPC_MB_TIMEOUT_MS=10000"}
	first := startMailboxChild(t, "consumer", env...)
	require.Equal(t, "ready", first.Line(t))
	d := failingDir{Dir(dir), make(chan error, 1)}
	reg := message.NewRegistry(d)
	defer func() { require.NoError(t, reg.Close()) }()
	a, err := message.AddressOf("peer")
	require.NoError(t, err)
	old, err := reg.Lookup(ctxT(t), a)
	require.NoError(t, err)
	first.Kill(t)

	_, err = reg.Lookup(context.Background(), a)
	require.ErrorIs(t, err, message.ErrUnknownAddress, "no deadline: at once")
	require.ErrorIs(t, err, mailbox.ErrConsumerDead)
	<-d.failed
	other, err := message.AddressOf("never")
	require.NoError(t, err)
	_, err = reg.Lookup(ctxT(t), other)
	require.ErrorIs(t, err, message.ErrUnknownAddress, "a name never resolved: at once")
	require.ErrorIs(t, err, fs.ErrNotExist)
	<-d.failed

	type result struct {
		mb  *mailbox.Mailbox
		err error
	}
	done := make(chan result, 1)
	go func() {
		mb, err := reg.Lookup(ctxT(t), a) // a deadline: the hang guard's
		done <- result{mb, err}
	}()
	require.ErrorIs(t, <-d.failed, mailbox.ErrConsumerDead, "the Lookup found the dead consumer's mailbox first")
	second := startMailboxChild(t, "consumer", append(env, "DUTY_IPC_MB_REPLACE=1")...)
	require.Equal(t, "ready", second.Line(t))
	r := <-done
	require.NoError(t, r.err, "the Lookup waited for the restart")
	require.NotSame(t, old, r.mb)
	require.NoError(t, r.mb.SendContext(ctxT(t), 1, []byte("two")))
	require.Equal(t, "got two", second.Line(t))
}

// mbChildStalled claims a 40-byte message, says "claimed" and waits,
// without writing anything, for the file DUTY_IPC_MB_GO to appear (its
// parent stops it meanwhile, as SIGSTOP would a real process); then it
// writes its payload (0xEE bytes) through its claim, commits, and prints
// the commit's outcome: a sender that resumes after its claim was
// released.
func mbChildStalled() error {
	m, _, err := mbOpenChild()
	if err != nil {
		return err
	}
	c, err := m.Claim(mbStalledTypeID, 40)
	if err != nil {
		return err
	}
	fmt.Println("claimed")
	for {
		if _, err := os.Stat(os.Getenv("DUTY_IPC_MB_GO")); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	copy(c.Payload(), bytes.Repeat([]byte{0xEE}, 40))
	fmt.Printf("commit: %v\n", c.Commit())
	time.Sleep(time.Hour) // the parent ends us
	return nil
}

const mbStalledTypeID int32 = 77

// stoppedSender creates a small mailbox (unblock timeout 100 ms) and a
// child sender that has claimed 40 bytes and is stopped (SIGSTOP) before
// it writes them; creating goFile lets it go on once continued.
func stoppedSender(t *testing.T, checksum bool) (*mailbox.Mailbox, *MailboxFile, *proc, string) {
	t.Helper()
	dir := testDir(t)
	m, mf, err := CreateMailbox(dir, "mbox", mailbox.Config{
		Capacity: mailboxdef.MinCapacity, UnblockTimeout: 100 * time.Millisecond, Checksum: checksum})
	require.NoError(t, err)
	t.Cleanup(func() { mf.Close() })
	goFile := filepath.Join(dir, "go")
	child := startMailboxChild(t, "stalled", mbPathEnv(mf.Path()), "DUTY_IPC_MB_GO="+goFile)
	require.Equal(t, "claimed", child.Line(t), "child stderr: %s", child.Stderr)
	require.NoError(t, child.Cmd.Process.Signal(syscall.SIGSTOP))
	t.Cleanup(func() { _ = child.Cmd.Process.Signal(syscall.SIGCONT) })
	return m, mf, child, goFile
}

// TestCrossProcessMailboxSenderStoppedPastUnblock: a child sender claims
// and is stopped (SIGSTOP) before it writes; the consumer releases its
// claim as torn after the unblock timeout, and other messages go round the
// ring until one (the victim) is claimed where the stopped sender's claim
// was. The child is continued (SIGCONT) and writes its payload through its
// stale claim, into the victim. With checksums (mailbox.Config.Checksum,
// stored in the file, so the child seals too) the victim is dropped and
// counted, never delivered with the child's bytes; without them it is
// delivered as the child left it and nothing counts it: the limit
// docs/ipc.md's failure table states. The child's Commit fails either way.
func TestCrossProcessMailboxSenderStoppedPastUnblock(t *testing.T) {
	for _, checksum := range []bool{true, false} {
		t.Run(map[bool]string{true: "checksum", false: "plain"}[checksum], func(t *testing.T) {
			m, mf, child, goFile := stoppedSender(t, checksum)

			var delivered [][]byte
			h := func(msg *mailbox.Message) mailbox.Action {
				delivered = append(delivered, append([]byte(nil), msg.Payload()...))
				return mailbox.Continue
			}
			deadline := time.Now().Add(time.Minute) // hang guard only
			for m.Stats().Torn == 0 {
				require.True(t, time.Now().Before(deadline), "the stopped sender's claim was never released")
				_, err := m.Drain(h, 100)
				require.NoError(t, err)
				time.Sleep(time.Millisecond)
			}
			// Round the ring until the next message lands where the claim was.
			good := bytes.Repeat([]byte{0x11}, 40)
			over := 0
			if checksum {
				over = mailboxdef.ChecksumLength
			}
			size := ringbuf.RecordSize(over + len(good))
			for i := 0; mailboxdef.MinCapacity-int(mf.ring.ProducerPosition()&(mailboxdef.MinCapacity-1)) >= size; i++ {
				require.Less(t, i, 1000)
				require.NoError(t, m.Send(1, good))
				_, err := m.Drain(h, 100)
				require.NoError(t, err)
			}
			require.NoError(t, m.Send(2, good)) // the victim
			delivered = nil

			require.NoError(t, os.WriteFile(goFile, nil, 0o600))
			require.NoError(t, child.Cmd.Process.Signal(syscall.SIGCONT))
			require.Contains(t, child.Line(t), "commit: "+mailbox.ErrClaim.Error(), "child stderr: %s", child.Stderr)

			_, err := m.Drain(h, 100)
			if !checksum {
				require.NoError(t, err)
				require.Equal(t, [][]byte{bytes.Repeat([]byte{0xEE}, 40)}, delivered, "delivered as the child left it")
				require.Zero(t, m.Stats().Corrupt)
				return
			}
			require.ErrorIs(t, err, mailbox.ErrCorruptFrame)
			require.Empty(t, delivered, "no message with the stopped sender's bytes")
			require.Equal(t, int64(1), m.Stats().Corrupt)
			require.Equal(t, int64(1), m.Stats().Torn)
		})
	}
}

// TestCrossProcessMailboxStoppedSenderOverHeaders: as
// TestCrossProcessMailboxSenderStoppedPastUnblock, but the messages queued
// where the stopped sender's claim was are small, so that the child's
// late bytes land over their headers. The mailbox does not stay wedged
// (nor full, while its consumer heartbeats): once the damage has stood for
// the unblock timeout it skips to the records that chain to the tail,
// counts the stretch in Stats.Corrupt, and every message behind the
// damage, and every later one, arrives in order; with checksums none
// carries the child's bytes.
func TestCrossProcessMailboxStoppedSenderOverHeaders(t *testing.T) {
	for _, checksum := range []bool{true, false} {
		t.Run(map[bool]string{true: "checksum", false: "plain"}[checksum], func(t *testing.T) {
			m, mf, child, goFile := stoppedSender(t, checksum)

			var delivered []byte
			var errs []error
			drain := func() {
				_, err := m.Drain(func(msg *mailbox.Message) mailbox.Action {
					delivered = append(delivered, msg.Payload()[0])
					return mailbox.Continue
				}, 100)
				if err != nil {
					errs = append(errs, err)
				}
			}
			deadline := time.Now().Add(time.Minute) // hang guard only
			for m.Stats().Torn == 0 {
				require.True(t, time.Now().Before(deadline), "the stopped sender's claim was never released")
				drain()
				time.Sleep(time.Millisecond)
			}
			// Round the ring until the next record lands where the claim was,
			// then queue small records there.
			small := make([]byte, 8)
			over := 0
			if checksum {
				over = mailboxdef.ChecksumLength
			}
			size := ringbuf.RecordSize(over + len(small))
			atZero := func() bool {
				rest := mailboxdef.MinCapacity - int(mf.ring.ProducerPosition()&(mailboxdef.MinCapacity-1))
				return rest == mailboxdef.MinCapacity || rest < size
			}
			for i := 0; !atZero(); i++ {
				require.Less(t, i, 1000)
				require.NoError(t, m.Send(1, small))
				drain()
			}
			delivered, errs = nil, nil
			for i := range 8 {
				require.NoError(t, m.Send(2, []byte{byte(10 + i), 0, 0, 0, 0, 0, 0, 0}))
			}
			require.NoError(t, os.WriteFile(goFile, nil, 0o600))
			require.NoError(t, child.Cmd.Process.Signal(syscall.SIGCONT))
			require.Contains(t, child.Line(t), "commit: "+mailbox.ErrClaim.Error(), "child stderr: %s", child.Stderr)

			for m.Stats().Depth > 0 {
				require.True(t, time.Now().Before(deadline), "the mailbox stays wedged: delivered %v, errors %v", delivered, errs)
				drain()
				time.Sleep(5 * time.Millisecond)
			}
			require.NoError(t, m.Send(3, []byte{99, 0, 0, 0, 0, 0, 0, 0}))
			drain()
			require.NotEmpty(t, delivered)
			require.Equal(t, byte(99), delivered[len(delivered)-1], "a later message arrives")
			require.Positive(t, m.Stats().Corrupt, "what was skipped is counted")
			require.ErrorIs(t, errors.Join(errs...), mailbox.ErrCorruptFrame, "and reported")
			if !checksum && delivered[0] == 0xEE {
				delivered = delivered[1:] // the limit checksums lift: a payload (not a header) took the bytes
			}
			for _, b := range delivered {
				require.NotEqual(t, byte(0xEE), b, "a message carrying the stopped sender's bytes")
			}
			require.IsIncreasing(t, delivered)
		})
	}
}

// mbChildWaker sends DUTY_IPC_MB_COUNT messages (a sequence number each),
// each only once the consumer sleeps on the mailbox's doorbell (the word
// at 8 in its shared words, docs/layouts.md), then prints "sent".
func mbChildWaker() error {
	m, f, err := mbOpenChild()
	if err != nil {
		return err
	}
	words, err := mailboxWords(f.File)
	if err != nil {
		return err
	}
	doorbell := (*atomic.Uint32)(unsafe.Pointer(&words[8]))
	for i := range envInt("DUTY_IPC_MB_COUNT") {
		for doorbell.Load() == 0 {
			time.Sleep(100 * time.Microsecond)
		}
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(i))
		if err := m.Send(1, b[:]); err != nil {
			return err
		}
	}
	fmt.Println("sent")
	time.Sleep(time.Hour) // the parent ends us
	return nil
}

// TestCrossProcessWakeIdle: a consumer that sleeps on its mailbox with
// mailbox.NewWakeIdle (for an hour unless woken) is woken by a sender in
// another process, which sends each message only once the consumer has
// fallen asleep: every message arrives, in order, each after a sleep that
// only the sender's wake-up could end.
func TestCrossProcessWakeIdle(t *testing.T) {
	m, mf, err := CreateMailbox(testDir(t), "mbox", mailbox.Config{})
	require.NoError(t, err)
	defer mf.Close()
	st, err := mailbox.NewWakeIdle(mailbox.WakeConfig{Spins: 1, MaxSleep: time.Hour}, m)
	require.NoError(t, err)
	const count = 20
	child := startMailboxChild(t, "waker", mbPathEnv(mf.Path()), "DUTY_IPC_MB_COUNT="+strconv.Itoa(count))
	var got []uint64
	done := make(chan error, 1)
	go func() {
		for len(got) < count {
			n, err := m.Drain(func(msg *mailbox.Message) mailbox.Action {
				got = append(got, binary.LittleEndian.Uint64(msg.Payload()))
				return mailbox.Continue
			}, 10)
			if err != nil {
				done <- err
				return
			}
			st.Idle(n)
		}
		done <- nil
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(2 * time.Minute): // hang guard only: a lost wake-up sleeps for an hour
		t.Fatalf("asleep with messages queued: got %d of %d; child stderr: %s", len(got), count, child.Stderr)
	}
	require.Equal(t, "sent", child.Line(t))
	for i, v := range got {
		require.Equal(t, uint64(i), v)
	}
}
