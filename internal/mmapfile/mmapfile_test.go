//go:build unix

package mmapfile

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func newFile(t *testing.T, size int64) *os.File {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(t.TempDir(), "f"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	require.NoError(t, Preallocate(int(f.Fd()), size, Fallocate))
	return f
}

func TestMapSharesTheFile(t *testing.T) {
	f := newFile(t, 8192)
	b, err := Map(int(f.Fd()), 8192, true, true)
	require.NoError(t, err)
	copy(b[4096:], "mapped")
	require.NoError(t, Sync(b, 4100, 4106))
	got := make([]byte, 6)
	_, err = f.ReadAt(got, 4096)
	require.NoError(t, err)
	require.Equal(t, "mapped", string(got))

	ro, err := Map(int(f.Fd()), 8192, false, false)
	require.NoError(t, err)
	require.Equal(t, "mapped", string(ro[4096:4102]))
	require.NoError(t, Unmap(ro))
	require.NoError(t, Unmap(b))
	require.NoError(t, Sync(nil, 5, 5), "an empty range is nothing to sync")
}

func TestPreallocateIsNeverSparse(t *testing.T) {
	for name, allocate := range map[string]func(int, int64) error{
		"fallocate":   Fallocate,
		"unsupported": func(int, int64) error { return unix.EOPNOTSUPP },
		"no syscall":  func(int, int64) error { return unix.ENOSYS },
	} {
		f, err := os.OpenFile(filepath.Join(t.TempDir(), "f"), os.O_RDWR|os.O_CREATE, 0o600)
		require.NoError(t, err)
		require.NoError(t, Preallocate(int(f.Fd()), 200_000, allocate), name)
		var st unix.Stat_t
		require.NoError(t, unix.Fstat(int(f.Fd()), &st))
		require.Equal(t, int64(200_000), st.Size, name)
		require.GreaterOrEqual(t, st.Blocks*512, st.Size, "%s: real blocks, not a sparse file", name)
		f.Close()
	}
	err := Preallocate(0, 10, func(int, int64) error { return unix.ENOSPC })
	require.ErrorIs(t, err, unix.ENOSPC, "a full disk is reported, not papered over with zeros")
}

func TestTryLockIsExclusive(t *testing.T) {
	f := newFile(t, 4096)
	other, err := os.OpenFile(f.Name(), os.O_RDWR, 0)
	require.NoError(t, err)
	defer other.Close()
	ok, err := TryLock(int(f.Fd()))
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = TryLock(int(other.Fd()))
	require.NoError(t, err)
	require.False(t, ok, "held by another open file description")
	require.NoError(t, Unlock(int(f.Fd())))
	ok, err = TryLock(int(other.Fd()))
	require.NoError(t, err)
	require.True(t, ok)
	_, err = TryLock(-1)
	require.Error(t, err)
}

// LockHeld sees TryLock's lock from another open file description, takes
// nothing (the holder's lock and a later TryLock are unaffected), and two
// probers do not see each other.
func TestLockHeld(t *testing.T) {
	f := newFile(t, 4096)
	a, err := os.OpenFile(f.Name(), os.O_RDWR, 0)
	require.NoError(t, err)
	defer a.Close()
	held, err := LockHeld(int(a.Fd()))
	require.NoError(t, err)
	require.False(t, held, "nobody holds it")
	ok, err := TryLock(int(f.Fd()))
	require.NoError(t, err)
	require.True(t, ok, "the probe let go of its lock")
	held, err = LockHeld(int(a.Fd()))
	require.NoError(t, err)
	require.True(t, held)
	require.NoError(t, Unlock(int(f.Fd())))
	// Two probes at once: a shared lock does not exclude another.
	b, err := os.OpenFile(f.Name(), os.O_RDWR, 0)
	require.NoError(t, err)
	defer b.Close()
	require.NoError(t, unix.Flock(int(b.Fd()), unix.LOCK_SH|unix.LOCK_NB))
	held, err = LockHeld(int(a.Fd()))
	require.NoError(t, err)
	require.False(t, held, "another prober is not the owner")
	require.NoError(t, Unlock(int(b.Fd())))
	_, err = LockHeld(-1)
	require.Error(t, err)
}

func TestRevokeLeavesZeros(t *testing.T) {
	f := newFile(t, 4096)
	b, err := Map(int(f.Fd()), 4096, true, false)
	require.NoError(t, err)
	copy(b, "data")
	require.NoError(t, Revoke(b))
	require.Equal(t, byte(0), b[0], "a reader still holding the slice reads zeros")
	require.NoError(t, Unmap(b))
	got := make([]byte, 4)
	_, err = f.ReadAt(got, 0)
	require.NoError(t, err)
	require.Equal(t, "data", string(got), "the file keeps what was stored before")
	require.NoError(t, Revoke(nil))
}

func TestPopulateAndPunch(t *testing.T) {
	f := newFile(t, 1<<20)
	b, err := Map(int(f.Fd()), 1<<20, true, false)
	require.NoError(t, err)
	defer Unmap(b)
	if err := PopulateWrite(b); err != ErrUnsupported {
		require.NoError(t, err)
	}
	b[0] = 1
	err = PunchHole(int(f.Fd()), 0, 1<<20)
	if err == ErrUnsupported {
		return
	}
	require.NoError(t, err)
	require.Equal(t, byte(0), b[0], "a punched hole reads as zeros")
	var st unix.Stat_t
	require.NoError(t, unix.Fstat(int(f.Fd()), &st))
	require.Equal(t, int64(1<<20), st.Size, "the file keeps its size")
}

func TestSyncDir(t *testing.T) {
	require.NoError(t, SyncDir(t.TempDir()))
	require.Error(t, SyncDir(filepath.Join(t.TempDir(), "missing")))
}

func TestWait(t *testing.T) {
	require.NoError(t, Wait(context.Background(), time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, Wait(ctx, time.Hour), context.Canceled)
	ctx, cancel = context.WithCancel(context.Background())
	go func() { time.Sleep(time.Millisecond); cancel() }()
	require.ErrorIs(t, Wait(ctx, time.Hour), context.Canceled, "a wait ends with its context")
}
