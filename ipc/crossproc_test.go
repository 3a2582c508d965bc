package ipc

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/ringbuf"
)

// consumer reads test messages from a ring and checks exactly-once,
// per-sender order and content.
type consumer struct {
	t    *testing.T
	r    *Ring
	next map[int]uint64
	err  error
	n    int
}

func newConsumer(t *testing.T, r *Ring) *consumer {
	return &consumer{t: t, r: r, next: map[int]uint64{}}
}

func (c *consumer) handle(typeID int32, p []byte) {
	if c.err != nil {
		return
	}
	if typeID != testTypeID {
		c.err = fmt.Errorf("type %d", typeID)
		return
	}
	sender, seq, err := checkTestPayload(p)
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
}

// poll reads once and fails the test on a ring or content error.
func (c *consumer) poll() int {
	n, err := c.r.Read(c.handle, ringbuf.NoLimit)
	require.NoError(c.t, err)
	require.NoError(c.t, c.err)
	return n
}

// TestCrossProcessRing: three child processes each send 100,000 messages
// through one many-to-one ring in a shared file; the parent consumes and
// checks every message arrives exactly once, in per-sender order, intact.
func TestCrossProcessRing(t *testing.T) {
	const senders, count = 3, 100_000
	dir := testDir(t)
	r, err := CreateRing(dir, "m2o", 64<<10)
	require.NoError(t, err)
	defer r.Close()

	var procs []*proc
	for s := range senders {
		procs = append(procs, startChild(t, "", "producer", pathEnv(r.File.Path()),
			"DUTY_IPC_SENDER="+strconv.Itoa(s), "DUTY_IPC_COUNT="+strconv.Itoa(count)).Start(t))
	}
	c := newConsumer(t, r)
	deadline := time.Now().Add(5 * time.Minute) // hang guard only
	for idle := 0; c.n < senders*count; {
		if c.poll() > 0 {
			idle = 0
			continue
		}
		idle++
		backoff(idle)
		if idle%1000 == 0 {
			require.True(t, time.Now().Before(deadline), "received %d of %d", c.n, senders*count)
		}
	}
	for s, p := range procs {
		require.NoError(t, p.Wait(t), "producer %d: %s", s, p.Stderr)
		require.Equal(t, uint64(count), c.next[s])
	}
	require.Zero(t, r.poll(t), "nothing more")
	require.Equal(t, r.ProducerPosition(), r.ConsumerPosition())
}

func (r *Ring) poll(t *testing.T) int {
	n, err := r.Read(func(int32, []byte) {}, ringbuf.NoLimit)
	require.NoError(t, err)
	return n
}

// TestCrossProcessCrashMidClaim: while two producers stream, a third child
// claims space and is SIGKILLed before committing. The consumer stops at
// the claim; once its position has not moved for a liveness timeout while
// the producer position is ahead, it calls Unblock (counted once), and
// every message of the live producers arrives.
func TestCrossProcessCrashMidClaim(t *testing.T) {
	const count = 20_000
	const livenessTimeout = 2 * time.Second // far above any scheduling delay of a live producer
	dir := testDir(t)
	r, err := CreateRing(dir, "crash", 4096)
	require.NoError(t, err)
	defer r.Close()
	path := r.File.Path()

	var producers []*proc
	for s := range 2 {
		producers = append(producers, startChild(t, "", "producer", pathEnv(path),
			"DUTY_IPC_SENDER="+strconv.Itoa(s), "DUTY_IPC_COUNT="+strconv.Itoa(count)).Start(t))
	}
	c := newConsumer(t, r)
	for c.n < 1000 { // the stream is flowing
		if c.poll() == 0 {
			runtime.Gosched()
		}
	}
	// The consumer keeps consuming while the claimer gets its claim in.
	claimer := startChild(t, "", "claimer", pathEnv(path)).Start(t)
	claimed := claimer.LineAsync()
	killed := false

	unblocks, blockedSeen := 0, false
	lastHead, lastMove := r.ConsumerPosition(), time.Now()
	deadline := time.Now().Add(5 * time.Minute) // hang guard only
	for idle := 0; c.n < 2*count; {
		require.True(t, time.Now().Before(deadline), "received %d of %d; claimer killed: %t", c.n, 2*count, killed)
		if !killed {
			select {
			case line := <-claimed:
				require.True(t, strings.HasPrefix(line, "claimed "), "%q, stderr: %s", line, claimer.Stderr)
				claimer.Kill(t)
				require.True(t, claimer.Cmd.ProcessState.Sys().(syscall.WaitStatus).Signaled())
				killed = true
			default:
			}
		}
		if c.poll() > 0 {
			idle = 0
		} else {
			idle++
			backoff(idle)
		}
		if head := r.ConsumerPosition(); head != lastHead {
			lastHead, lastMove = head, time.Now()
			continue
		}
		// Agrona's rule: the consumer position has not moved for a liveness
		// timeout while the producers are ahead of it.
		if r.ProducerPosition() > lastHead && time.Since(lastMove) > livenessTimeout {
			blockedSeen = true
			ok, err := r.Unblock()
			require.NoError(t, err)
			if ok {
				unblocks++
				lastMove = time.Now()
			}
		}
	}
	for s, p := range producers {
		require.NoError(t, p.Wait(t), "producer %d: %s", s, p.Stderr)
		require.Equal(t, uint64(count), c.next[s])
	}
	require.True(t, blockedSeen, "the consumer was blocked by the dead claim")
	require.Equal(t, 1, unblocks, "exactly the dead claim was unblocked")
	require.Zero(t, r.poll(t))
	require.Equal(t, r.ProducerPosition(), r.ConsumerPosition(), "nothing left behind the claim")
}

// TestCrossProcessCreateRace: two processes create the same name at the
// same moment; exactly one wins, the other gets ErrExists, and the file is
// a valid ring. Repeated, in both creation modes.
func TestCrossProcessCreateRace(t *testing.T) {
	dir := testDir(t)
	for _, direct := range []string{"0", "1"} {
		for round := range 5 {
			name := "race-" + direct + "-" + strconv.Itoa(round)
			var ps []*proc
			for range 2 {
				ps = append(ps, startChild(t, "", "creator", append(dirNameEnv(dir, name), "DUTY_IPC_DIRECT="+direct)...).Start(t))
			}
			for _, p := range ps { // release both as close together as we can
				_, err := io.WriteString(p.Stdin, "go\n")
				require.NoError(t, err)
			}
			got := map[string]int{}
			for _, p := range ps {
				got[p.Line(t)]++
				require.NoError(t, p.Wait(t), p.Stderr.String())
			}
			require.Equal(t, map[string]int{"won": 1, "exists": 1}, got, "round %d direct=%s", round, direct)
			o, err := OpenRing(ctxT(t), filepath.Join(dir, name))
			require.NoError(t, err)
			require.NoError(t, o.Write(testTypeID, []byte("valid")))
			require.NoError(t, o.Close())
		}
	}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ents, 10, "no temporary or half-made files")
}

// TestCrossProcessOwnerDies: a child owns a ring file; while it lives, its
// file is never removed or replaced, whatever the clock; after SIGKILL the
// file is stale at once, however fresh its heartbeat (no process, and
// nobody holds its lock), and is replaced.
func TestCrossProcessOwnerDies(t *testing.T) {
	dir := testDir(t)
	owner := startChild(t, "", "owner", dirNameEnv(dir, "owned")...).Start(t)
	require.Equal(t, "ready", owner.Line(t))
	path := filepath.Join(dir, "owned")
	o, err := OpenRing(ctxT(t), path, withLiveOwner())
	require.NoError(t, err)
	defer o.Close()
	var got string
	_, err = o.Read(func(_ int32, p []byte) { got = string(p) }, 1)
	require.NoError(t, err)
	require.Equal(t, "from the owner", got)

	now := time.Now()
	l, err := o.File.Liveness(now, 0)
	require.NoError(t, err)
	require.Equal(t, OwnerAlive, l.State, l.describe())
	require.Equal(t, owner.Cmd.Process.Pid, l.PID)
	require.True(t, o.File.ownerAlive(now))

	later := WithClock(clock.Func(func() time.Time { return now.Add(time.Hour) }))
	require.ErrorIs(t, RemoveIfStale(path, later), ErrOwnerAlive)
	_, err = CreateRing(dir, "owned", 1024, WithReplaceStale(), later)
	require.ErrorIs(t, err, ErrOwnerAlive)
	removed, err := Cleanup(dir, later)
	require.NoError(t, err)
	require.Empty(t, removed)

	owner.Kill(t)
	l, err = o.File.Liveness(now, 0)
	require.NoError(t, err)
	require.Equal(t, OwnerDead, l.State, "heartbeat still fresh, process gone, lock free: %s", l.describe())
	require.False(t, l.Running)
	at := WithClock(clock.Func(func() time.Time { return now }))
	_, err = open(ctxT(t), path, withLiveOwner(), at)
	require.ErrorIs(t, err, ErrOwnerDead)

	n, err := CreateRing(dir, "owned", 1024, WithReplaceStale(), at)
	require.NoError(t, err, "a dead owner's file is replaced at once")
	defer n.Close()
	require.True(t, n.File.ownerAlive(now), "its heartbeat is the injected clock's")
	require.NoError(t, o.Write(testTypeID, []byte("old mapping still valid")))
	require.Zero(t, n.poll(t), "the new file is a new ring")
}

// TestCrossProcessPermission: a file created by root with mode 0600 cannot
// be opened by another user (ErrPermission), nor can that user create in a
// directory it may not write; with mode 0666 the same child opens it (the
// control that shows the child works).
func TestCrossProcessPermission(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root: the test runs a child as uid 65534 (nobody); as a normal user, run it as root to cover ErrPermission")
	}
	// The child must be able to execute the binary and reach the files.
	exeDir, err := os.MkdirTemp("", "duty-ipc-exe-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(exeDir) })
	require.NoError(t, os.Chmod(exeDir, 0o755))
	self, err := os.Executable()
	require.NoError(t, err)
	exe := filepath.Join(exeDir, "ipc.test")
	copyFile(t, self, exe)
	dir := testDir(t)
	require.NoError(t, os.Chmod(dir, 0o755))

	private, err := CreateRing(dir, "private", 1024)
	require.NoError(t, err)
	defer private.Close()
	public, err := CreateRing(dir, "public", 1024, WithMode(0o666))
	require.NoError(t, err)
	defer public.Close()

	asNobody := func(env ...string) string {
		p := startChild(t, exe, "opener", env...)
		p.Cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		p.Start(t)
		line := p.Line(t)
		require.NoError(t, p.Wait(t), p.Stderr.String())
		return line
	}
	require.Equal(t, "ok", asNobody(pathEnv(public.File.Path())))
	require.Equal(t, "permission", asNobody(pathEnv(private.File.Path())))
	require.Equal(t, "permission", asNobody(append(dirNameEnv(dir, "mine"), "DUTY_IPC_OP=create")...))
}

func copyFile(t *testing.T, from, to string) {
	in, err := os.Open(from)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
}
