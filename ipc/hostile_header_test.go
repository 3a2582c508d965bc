package ipc

import (
	"context"
	"encoding/binary"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/dutyrt/duty/clock"
)

// TestHeartbeatAfterCloseKeepsTheClosedMark: the owner's Close tells every
// process it has finished (heartbeatClosed, lock dropped); a Heartbeat from
// a goroutine that still holds a reference must not undo that (the owner
// would then look alive, later hung, and cleaners would keep the file).
func TestHeartbeatAfterCloseKeepsTheClosedMark(t *testing.T) {
	f, err := create(t.TempDir(), "hb", kindUserMin, []int{8})
	require.NoError(t, err)
	require.NoError(t, f.acquire()) // a duty-cycle goroutine's reference
	defer f.release()
	require.NoError(t, f.Close())

	require.ErrorIs(t, f.Heartbeat(time.Now().UnixMilli()), ErrClosed)
	hb, err := f.heartbeatMillis()
	require.NoError(t, err)
	require.Equal(t, heartbeatClosed, hb, "closed mark overwritten")
	l, err := f.Liveness(time.Now(), 0)
	require.NoError(t, err)
	require.Equal(t, OwnerClosed, l.State)
}

// pwrite64 stores v at off in the file at path, as a broken or hostile
// process with write access would.
func pwrite64(t *testing.T, path string, off int, v int64) {
	t.Helper()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(v))
	fd, err := unix.Open(path, unix.O_RDWR, 0)
	require.NoError(t, err)
	_, err = unix.Pwrite(fd, b[:], int64(off))
	require.NoError(t, err)
	require.NoError(t, unix.Close(fd))
}

// TestLivenessTimeoutBeyondADurationIsCorrupt: a liveness timeout too long
// for a time.Duration comes from no creator. Accepted, it wrapped negative
// and a live, heartbeating owner was assessed hung (ErrOwnerDead from
// WithLiveOwner).
func TestLivenessTimeoutBeyondADurationIsCorrupt(t *testing.T) {
	f, err := create(t.TempDir(), "lt", kindUserMin, []int{8})
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Heartbeat(time.Now().UnixMilli()))
	pwrite64(t, f.Path(), livenessTimeoutOffset, maxLivenessMillis+1)
	_, err = open(ctxT(t), f.Path())
	require.ErrorIs(t, err, ErrCorrupt)

	pwrite64(t, f.Path(), livenessTimeoutOffset, maxLivenessMillis) // the longest a creator can write
	g, err := open(ctxT(t), f.Path(), withLiveOwner())
	require.NoError(t, err, "a live owner with the longest timeout")
	require.NoError(t, g.Close())
}

// TestHeartbeatAgeDoesNotWrap: a heartbeat so far in the past (or future)
// that its age in nanoseconds overflows must count as stale: it used to
// wrap to a small age and a dead owner looked OwnerUnconfirmed.
func TestHeartbeatAgeDoesNotWrap(t *testing.T) {
	now := time.Now()
	// Our own pid with another start time: a process that is not running
	// (no other process is looked at or signalled).
	pid, start := int64(os.Getpid()), int64(selfStartTime())+1
	for _, hb := range []int64{
		now.UnixMilli() - 18446744073709, // 2^64/1e6 ms ago: the ns age wrapped to -0.55 ms
		now.UnixMilli() + 18446744073709,
		-1 << 63, // the ms difference itself overflows
		1<<63 - 1,
	} {
		l := assess(pid, start, hb, now, 10*time.Second)
		require.Equal(t, OwnerDead, l.State, "heartbeat %d: %s", hb, l.describe())
		require.Greater(t, l.HeartbeatAge.Abs(), time.Hour, "the age is clamped, not wrapped: %s", l.describe())
	}
	l := assess(pid, start, now.UnixMilli()-3000, now, 10*time.Second)
	require.Equal(t, OwnerUnconfirmed, l.State, "control: a fresh heartbeat of a process not running")
	require.Equal(t, 3*time.Second, l.HeartbeatAge)
}

// TestOpenMailboxBoundedWithCreationTimeInTheFuture: a ring file without a
// mailbox header whose creation time lies in the future (a corrupt header,
// or a creator whose clock is ahead) is not a mailbox after the opener has
// waited mailboxReadyWait, not after its context ends. The opener's clock
// advances a second per reading, so the test does not wait.
func TestOpenMailboxBoundedWithCreationTimeInTheFuture(t *testing.T) {
	r, err := CreateRing(t.TempDir(), "plain", 1<<16) // a ring, no mailbox header
	require.NoError(t, err)
	defer r.Close()
	var ticks atomic.Int64
	base := time.Now()
	nowFn := func() time.Time { return base.Add(time.Duration(ticks.Add(1)) * time.Second) }

	pwrite64(t, r.File.Path(), createdOffset, base.Add(-6*time.Second).UnixMilli())
	_, _, err = OpenMailbox(context.Background(), r.File.Path(), WithClock(clock.Func(nowFn)))
	require.ErrorIs(t, err, errNotMailbox, "control: created 6 s ago")

	pwrite64(t, r.File.Path(), createdOffset, base.Add(24*time.Hour).UnixMilli())
	ticks.Store(0)
	_, _, err = OpenMailbox(context.Background(), r.File.Path(), WithClock(clock.Func(nowFn)), withPollInterval(time.Millisecond))
	require.ErrorIs(t, err, errNotMailbox)
	require.LessOrEqual(t, ticks.Load(), int64(mailboxReadyWait/time.Second)+3, "gave up after its own wait")
}
