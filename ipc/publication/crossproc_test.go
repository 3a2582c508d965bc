package publication

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/ringbuf"
)

// The child roles below run in the test binary re-executed by startChild
// (main_test.go), which TestMain dispatches.

func childContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

// childSubscriber joins the publication at DUTY_IPC_PATH, says so, and
// polls to the end of the stream, checking every message (exactly once,
// in order, intact); DUTY_IPC_SLOW_US makes its handler spend that long
// per message. It prints "done <messages> <end> unblocked=<n>", where end
// is "eos" or "publisher-dead".
func childSubscriber() error {
	ctx, cancel := childContext()
	defer cancel()
	s, err := OpenSubscription(ctx, os.Getenv("DUTY_IPC_PATH"))
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Printf("joined %d %d\n", s.slotIndex(), s.joinedAt())
	slow := time.Duration(0)
	if v := os.Getenv("DUTY_IPC_SLOW_US"); v != "" {
		us, err := strconv.Atoi(v)
		if err != nil {
			return err
		}
		slow = time.Duration(us) * time.Microsecond
	}
	c := newPubChecker()
	h := c.handle
	if slow > 0 {
		h = func(typeID int32, p []byte) {
			c.handle(typeID, p)
			// A busy wait: time.Sleep's granularity, far coarser than
			// slow, would make the test slow, not the subscriber more
			// realistic.
			for start := time.Now(); time.Since(start) < slow; {
			}
		}
	}
	deadline := time.Now().Add(5 * time.Minute) // hang guard only
	for idle := 0; ; {
		n, err := s.Poll(h, 256)
		if c.err != nil {
			return c.err
		}
		end := ""
		switch {
		case err == ErrPublisherDead:
			end = "publisher-dead"
		case err == ErrEndOfStream:
			end = "eos"
		case err != nil:
			return err
		}
		if end != "" {
			fmt.Printf("done %d %s unblocked=%d\n", c.n, end, s.PublicationStats().UnblockedClaims)
			return nil
		}
		if n > 0 {
			idle = 0
			continue
		}
		idle++
		backoff(idle)
		if idle%1000 == 0 && time.Now().After(deadline) {
			return fmt.Errorf("stuck after %d messages at %d", c.n, s.Position())
		}
	}
}

// childSubscriberHang joins, says so, and never polls again: it waits to
// be killed.
func childSubscriberHang() error {
	ctx, cancel := childContext()
	defer cancel()
	s, err := OpenSubscription(ctx, os.Getenv("DUTY_IPC_PATH"))
	if err != nil {
		return err
	}
	fmt.Printf("joined %d %d\n", s.slotIndex(), s.joinedAt())
	time.Sleep(time.Hour)
	return errors.New("not killed")
}

// childPublisherClaimer creates the publication DUTY_IPC_DIR/DUTY_IPC_NAME
// (liveness and unblock timeouts of 1 s), heartbeats from a goroutine,
// waits for DUTY_IPC_SUBS subscribers, publishes DUTY_IPC_COUNT messages,
// claims space for one more, says so, and waits to be killed.
func childPublisherClaimer() error {
	p, err := Create(os.Getenv("DUTY_IPC_DIR"), os.Getenv("DUTY_IPC_NAME"), 64<<10,
		withUnblockTimeout(time.Second), WithFileOptions(ipc.WithLivenessTimeout(time.Second)))
	if err != nil {
		return err
	}
	if err := childServe(p, 100*time.Millisecond, envInt("DUTY_IPC_SUBS"), envInt("DUTY_IPC_COUNT")); err != nil {
		return err
	}
	var c Claim
	for spins := 0; ; spins++ {
		if c, err = p.TryClaim(pubTypeID, 64); err == nil {
			break
		}
		if err != ErrBackPressured && err != ErrAdminAction {
			return err
		}
		backoff(spins)
	}
	copy(c.Payload, "this message is torn: the publisher dies before its commit")
	fmt.Printf("claimed %d\n", c.Position())
	time.Sleep(time.Hour)
	return errors.New("not killed")
}

// childPublisherHold creates the publication DUTY_IPC_DIR/DUTY_IPC_NAME
// with a liveness timeout of an hour (only its process can tell its
// death), heartbeats from a goroutine, waits for one subscriber, publishes
// DUTY_IPC_COUNT messages, says so, and waits to be killed or stopped.
func childPublisherHold() error {
	p, err := Create(os.Getenv("DUTY_IPC_DIR"), os.Getenv("DUTY_IPC_NAME"), 64<<10,
		WithFileOptions(ipc.WithLivenessTimeout(time.Hour)))
	if err != nil {
		return err
	}
	count := envInt("DUTY_IPC_COUNT")
	if err := childServe(p, 10*time.Millisecond, 1, count); err != nil {
		return err
	}
	fmt.Println("published", count)
	time.Sleep(time.Hour)
	return errors.New("not killed")
}

// childServe is a child publisher's common part: it heartbeats p every
// beat from a goroutine (for good: the child is killed), says "created",
// waits for subs subscribers and publishes count messages.
func childServe(p *Publication, beat time.Duration, subs, count int) error {
	go func() {
		for {
			if err := p.Heartbeat(time.Now().UnixMilli()); err != nil {
				fmt.Fprintln(os.Stderr, "heartbeat:", err)
			}
			time.Sleep(beat)
		}
	}()
	fmt.Println("created")
	for deadline := time.Now().Add(30 * time.Second); p.activeSubscriberCount() < subs; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("%d subscribers joined, want %d", p.activeSubscriberCount(), subs)
		}
	}
	buf := make([]byte, p.MaxMessageLength())
	for seq := range uint64(count) {
		if err := offerUntil(p, pubPayload(buf, 0, seq, pubLength(seq, p.MaxMessageLength()))); err != nil {
			return err
		}
	}
	return nil
}

// offerUntil offers until success or an error other than the transient
// outcomes.
func offerUntil(p *Publication, payload []byte) error {
	deadline := time.Now().Add(60 * time.Second) // hang guard only
	for spins := 0; ; spins++ {
		_, err := p.Offer(pubTypeID, payload)
		switch err {
		case nil:
			return nil
		case ErrBackPressured, ErrAdminAction, ErrNotConnected:
		default:
			return err
		}
		backoff(spins)
		if spins%1000 == 999 && time.Now().After(deadline) {
			return fmt.Errorf("offer stuck: %w, stats %+v", err, p.Stats())
		}
	}
}

// waitActive waits until n subscribers are active.
func waitActive(t *testing.T, p *Publication, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second) // hang guard only
	for p.activeSubscriberCount() < n {
		require.True(t, time.Now().Before(deadline), "%d of %d subscribers active", p.activeSubscriberCount(), n)
		time.Sleep(time.Millisecond)
	}
}

// publishAll publishes count test messages, heartbeating as an owner's duty
// cycle would, and returns the transient outcomes seen.
func publishAll(t *testing.T, p *Publication, count int, onOutcome func(error)) {
	t.Helper()
	buf := make([]byte, p.MaxMessageLength())
	lastBeat := time.Now()
	for seq := range uint64(count) {
		payload := pubPayload(buf, 0, seq, pubLength(seq, p.MaxMessageLength()))
		for spins := 0; ; spins++ {
			_, err := p.Offer(pubTypeID, payload)
			if err == nil {
				break
			}
			if onOutcome != nil {
				onOutcome(err)
			}
			require.True(t, err == ErrBackPressured || err == ErrAdminAction, "seq %d: %v", seq, err)
			backoff(spins)
		}
		if time.Since(lastBeat) > 100*time.Millisecond {
			require.NoError(t, p.Heartbeat(time.Now().UnixMilli()))
			lastBeat = time.Now()
		}
	}
}

func joinedLine(t *testing.T, p *proc) {
	t.Helper()
	line := p.Line(t)
	require.True(t, strings.HasPrefix(line, "joined "), "%q, stderr: %s", line, p.Stderr)
}

func doneLine(t *testing.T, p *proc) (int, string, int) {
	t.Helper()
	line := p.Line(t)
	var n, unblocked int
	var end string
	_, err := fmt.Sscanf(line, "done %d %s unblocked=%d", &n, &end, &unblocked)
	require.NoError(t, err, "%q, stderr: %s", line, p.Stderr)
	require.NoError(t, p.Wait(t), "stderr: %s", p.Stderr)
	return n, end, unblocked
}

// TestCrossProcessPublication: this process publishes 100,000 messages of
// mixed sizes (every 17th fragmented) to three subscriber processes; each
// receives every message exactly once, in order, intact, then the end of
// the stream.
func TestCrossProcessPublication(t *testing.T) {
	const count = 100_000
	p, err := Create(testDir(t), "pub", 64<<10)
	require.NoError(t, err)
	defer p.Close()
	var subs []*proc
	for range 3 {
		subs = append(subs, startChild(t, "sub", pathEnv(p.File().Path())))
	}
	for _, s := range subs {
		joinedLine(t, s)
	}
	waitActive(t, p, 3)
	publishAll(t, p, count, nil)
	require.NoError(t, p.Close())
	for i, s := range subs {
		n, end, _ := doneLine(t, s)
		require.Equal(t, count, n, "subscriber %d", i)
		require.Equal(t, "eos", end, "subscriber %d", i)
	}
}

// TestCrossProcessSlowSubscriber: one subscriber process sleeps in its
// handler; the publisher is back-pressured (the outcome is seen and
// counted) and nothing is lost: both subscribers get everything.
func TestCrossProcessSlowSubscriber(t *testing.T) {
	const count = 10_000
	p, err := Create(testDir(t), "pub", 16<<10)
	require.NoError(t, err)
	defer p.Close()
	fast := startChild(t, "sub", pathEnv(p.File().Path()))
	slow := startChild(t, "sub", pathEnv(p.File().Path()), "DUTY_IPC_SLOW_US=50")
	joinedLine(t, fast)
	joinedLine(t, slow)
	waitActive(t, p, 2)
	backPressured := 0
	publishAll(t, p, count, func(err error) {
		if err == ErrBackPressured {
			backPressured++
		}
	})
	st := p.Stats()
	require.NoError(t, p.Close())
	require.Positive(t, backPressured, "the slow subscriber held the publisher back")
	require.Equal(t, int64(backPressured), st.BackPressured, "and every such outcome was counted")
	require.Zero(t, st.DroppedSubscribers)
	for _, s := range []*proc{fast, slow} {
		n, end, _ := doneLine(t, s)
		require.Equal(t, count, n)
		require.Equal(t, "eos", end)
	}
}

// TestCrossProcessSubscriberKilled: of three subscriber processes one is
// SIGKILLed right after joining. The publisher is back-pressured by its
// frozen position until the subscriber timeout, then drops it (counted
// once) and publishing resumes; the two live subscribers get everything.
func TestCrossProcessSubscriberKilled(t *testing.T) {
	const count = 20_000
	const timeout = 1500 * time.Millisecond
	p, err := Create(testDir(t), "pub", 64<<10, WithSubscriberTimeout(timeout))
	require.NoError(t, err)
	defer p.Close()
	live := []*proc{startChild(t, "sub", pathEnv(p.File().Path())), startChild(t, "sub", pathEnv(p.File().Path()))}
	victim := startChild(t, "sub-hang", pathEnv(p.File().Path()))
	for _, s := range append(live, victim) {
		joinedLine(t, s)
	}
	waitActive(t, p, 3)
	victim.Kill(t)
	require.True(t, victim.Cmd.ProcessState.Sys().(syscall.WaitStatus).Signaled())

	backPressuredBeforeDrop := 0
	publishAll(t, p, count, func(err error) {
		if err == ErrBackPressured && p.Stats().DroppedSubscribers == 0 {
			backPressuredBeforeDrop++
		}
	})
	st := p.Stats()
	require.NoError(t, p.Close())
	require.Positive(t, backPressuredBeforeDrop, "the dead subscriber held the publisher back")
	require.Equal(t, int64(1), st.DroppedSubscribers, "dropped once")
	require.Equal(t, 2, st.ActiveSubscribers)
	for i, s := range live {
		n, end, _ := doneLine(t, s)
		require.Equal(t, count, n, "live subscriber %d", i)
		require.Equal(t, "eos", end)
	}
}

// TestCrossProcessPublisherKilledMidClaim: a publisher process publishes
// 2,000 messages to two subscriber processes, claims space for one more
// and is SIGKILLed before committing. The subscribers stop at the claim;
// once it has not moved for the unblock timeout and the publisher is dead
// (heartbeat stale beyond its 1 s liveness timeout, process gone), one of
// them turns the claim into padding (counted once: one torn message), and
// both then see the end of the stream (ErrPublisherDead) with all 2,000
// messages.
func TestCrossProcessPublisherKilledMidClaim(t *testing.T) {
	const count = 2000
	dir := testDir(t)
	pub := startChild(t, "pub-claimer", append(dirNameEnv(dir, "pub"), "DUTY_IPC_SUBS=2", "DUTY_IPC_COUNT="+strconv.Itoa(count))...)
	require.Equal(t, "created", pub.Line(t), "stderr: %s", pub.Stderr)
	path := dir + "/pub"
	subs := []*proc{startChild(t, "sub", pathEnv(path)), startChild(t, "sub", pathEnv(path))}
	for _, s := range subs {
		joinedLine(t, s)
	}
	line := pub.Line(t)
	require.True(t, strings.HasPrefix(line, "claimed "), "%q, stderr: %s", line, pub.Stderr)
	pub.Kill(t)
	require.True(t, pub.Cmd.ProcessState.Sys().(syscall.WaitStatus).Signaled())

	var wg sync.WaitGroup
	results := make([][3]any, len(subs))
	for i, s := range subs {
		wg.Go(func() {
			n, end, unblocked := doneLine(t, s)
			results[i] = [3]any{n, end, unblocked}
		})
	}
	wg.Wait()
	for i, r := range results {
		require.Equal(t, [3]any{count, "publisher-dead", 1}, r, "subscriber %d", i)
	}
	s, err := OpenSubscription(ctxT(t), path)
	require.NoError(t, err)
	defer s.Close()
	st := s.PublicationStats()
	require.Equal(t, int64(1), st.UnblockedClaims, "one torn message")
	require.False(t, st.EndOfStream, "the publisher never closed it")
	_, err = s.Poll(func(int32, []byte) {}, 1)
	require.ErrorIs(t, err, ErrEndOfStream, "a late subscriber sees the end too")
	require.Equal(t, ErrPublisherDead, err)
}

// pollAll polls s into a count of messages until want arrived, failing on
// any error; bounded by a hang guard only.
func pollAll(t *testing.T, s *Subscription, want int) {
	t.Helper()
	got := 0
	h := func(int32, []byte) { got++ }
	deadline := time.Now().Add(60 * time.Second) // hang guard only
	for spins := 0; got < want; spins++ {
		n, err := s.Poll(h, ringbuf.NoLimit)
		require.NoError(t, err)
		if n == 0 {
			backoff(spins)
			require.True(t, time.Now().Before(deadline), "got %d of %d", got, want)
		}
	}
	require.Equal(t, want, got)
}

// TestCrossProcessPublisherKilledKnownAtOnce: a publisher process whose
// liveness timeout is an hour publishes 500 messages to the parent's
// subscription and is SIGKILLed: the subscriber reads all 500 and then
// ErrPublisherDead (an end of stream, errors.Is), at once: the file's
// lock is free and the process is gone, while its heartbeat is still
// fresh. The hang guard would end the wait an hour early otherwise.
func TestCrossProcessPublisherKilledKnownAtOnce(t *testing.T) {
	const count = 500
	pub, s := heldPublisher(t, count)

	pub.Kill(t)
	deadline := time.Now().Add(20 * time.Second) // hang guard only
	for spins := 0; ; spins++ {
		n, err := s.Poll(func(int32, []byte) { t.Error("nothing more was published") }, ringbuf.NoLimit)
		require.Zero(t, n)
		if err != nil {
			require.Equal(t, ErrPublisherDead, err)
			require.ErrorIs(t, err, ErrEndOfStream)
			break
		}
		require.True(t, time.Now().Before(deadline), "a killed publisher is not known (its heartbeat is fresh for an hour)")
		backoff(spins)
	}
	hb, err := ipcfile.HeartbeatMillis(s.file())
	require.NoError(t, err)
	require.NotEqual(t, int64(-1), hb, "the publisher never closed its file")
}

// heldPublisher starts a child that publishes count messages and then
// holds its publication open, and returns it with a subscription that has
// read all count.
func heldPublisher(t *testing.T, count int) (*proc, *Subscription) {
	t.Helper()
	dir := testDir(t)
	pub := startChild(t, "pub-hold", append(dirNameEnv(dir, "pub"), "DUTY_IPC_COUNT="+strconv.Itoa(count))...)
	require.Equal(t, "created", pub.Line(t), "stderr: %s", pub.Stderr)
	s, err := OpenSubscription(ctxT(t), dir+"/pub")
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	pollAll(t, s, count)
	require.Equal(t, "published "+strconv.Itoa(count), pub.Line(t))
	return pub, s
}

// TestCrossProcessPublisherStoppedIsNotDead: a SIGSTOPped publisher is
// hung, not dead: it holds its file's lock and its process exists, so
// idle polls across many probe intervals never report it dead; once it
// resumes and is then killed, it is.
func TestCrossProcessPublisherStoppedIsNotDead(t *testing.T) {
	const count = 10
	pub, s := heldPublisher(t, count)

	require.NoError(t, pub.Cmd.Process.Signal(syscall.SIGSTOP))
	defer func() { _ = pub.Cmd.Process.Signal(syscall.SIGCONT) }()
	// Polls across at least 20 probe intervals of the subscriber's clock
	// (however slowly they run): none says dead.
	start := time.Now()
	for spins := 0; time.Since(start) < 20*ownerProbeInterval*time.Millisecond; spins++ {
		_, err := s.Poll(func(int32, []byte) {}, ringbuf.NoLimit)
		require.NoError(t, err, "a stopped publisher is hung, not dead")
		backoff(spins)
	}
	require.True(t, s.lastOwnerProbe != 0 && !s.ownerExitedNow, "it was probed, and found alive")
	require.NoError(t, pub.Cmd.Process.Signal(syscall.SIGCONT))
	pub.Kill(t)
	deadline := time.Now().Add(20 * time.Second) // hang guard only
	for spins := 0; ; spins++ {
		_, err := s.Poll(func(int32, []byte) {}, ringbuf.NoLimit)
		if err != nil {
			require.Equal(t, ErrPublisherDead, err)
			break
		}
		require.True(t, time.Now().Before(deadline), "a killed publisher is not known")
		backoff(spins)
	}
}
