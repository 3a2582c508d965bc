package ipc

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/dutyrt/duty/ringbuf"
)

func TestCreateOpenRoundTrip(t *testing.T) {
	for _, direct := range []bool{false, true} {
		t.Run(map[bool]string{false: "link", true: "direct"}[direct], func(t *testing.T) {
			dir := testDir(t)
			var opts []Option
			if direct {
				opts = append(opts, withDirectCreate())
			}
			f, err := create(dir, "rt", kindUserMin, []int{10, 20}, opts...)
			require.NoError(t, err)
			defer f.Close()
			require.True(t, f.IsOwner())
			require.Equal(t, filepath.Join(dir, "rt"), f.Path())
			require.Equal(t, kindUserMin, f.Kind())
			require.Equal(t, fileLayoutVersion, f.layoutVersion())
			require.Equal(t, int64(3*4096), f.Len())
			require.Equal(t, 2, f.sectionCount())
			require.Equal(t, defaultLivenessTimeout, f.livenessTimeout())

			// Only the final name is left: no temporary file.
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, entries, 1)
			fi, err := os.Stat(f.Path())
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

			g, err := open(ctxT(t), f.Path())
			require.NoError(t, err)
			defer g.Close()
			require.False(t, g.IsOwner())
			require.Equal(t, f.Len(), g.Len())
			require.Equal(t, f.Kind(), g.Kind())

			a, err := f.Section(1)
			require.NoError(t, err)
			b, err := g.Section(1)
			require.NoError(t, err)
			copy(a, "shared, 2 mappings")
			require.Equal(t, "shared, 2 mappings", string(b[:18]))
		})
	}
}

func TestCreateModeIgnoresUmask(t *testing.T) {
	dir := testDir(t)
	old := unix.Umask(0o077)
	defer unix.Umask(old)
	f, err := create(dir, "mode", kindUserMin, []int{8}, WithMode(0o640))
	require.NoError(t, err)
	defer f.Close()
	fi, err := os.Stat(f.Path())
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
}

func TestCreateDefaultDir(t *testing.T) {
	d := DefaultDir()
	require.True(t, strings.HasSuffix(d, "/duty-"+strconv.Itoa(os.Getuid())), d)
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		require.True(t, strings.HasPrefix(d, "/dev/shm/"), d)
	}
	if _, err := os.Stat(d); err != nil {
		t.Cleanup(func() { _ = os.Remove(d) }) // ours: remove it if still empty
	}
	name := "default-dir-test-" + strconv.Itoa(os.Getpid())
	f, err := create("", name, kindUserMin, []int{8})
	require.NoError(t, err)
	require.Equal(t, filepath.Join(d, name), f.Path())
	require.NoError(t, f.Remove())
	require.NoError(t, f.Close())
	fi, err := os.Stat(d)
	require.NoError(t, err)
	require.True(t, fi.IsDir())
}

func TestCreateExists(t *testing.T) {
	for _, direct := range []bool{false, true} {
		dir := testDir(t)
		var opts []Option
		if direct {
			opts = append(opts, withDirectCreate())
		}
		f, err := create(dir, "x", kindUserMin, []int{8}, opts...)
		require.NoError(t, err)
		_, err = create(dir, "x", kindUserMin, []int{8}, opts...)
		require.ErrorIs(t, err, errExists)
		require.ErrorIs(t, err, fs.ErrExist)
		// The loser left nothing behind and did not touch the winner.
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Len(t, entries, 1)
		require.True(t, f.ownerAlive(time.Now()))
		require.NoError(t, f.Close())
	}
}

func TestCreateInvalidArguments(t *testing.T) {
	dir := testDir(t)
	for _, name := range []string{"", ".", "..", "a/b", "a\x00b", strings.Repeat("n", 201), tempPrefix + "x"} {
		_, err := create(dir, name, KindRing, []int{8})
		require.ErrorIs(t, err, errName, "%q", name)
	}
	require.NoError(t, validateName(strings.Repeat("n", 200)))
	for _, c := range []struct {
		name     string
		kind     Kind
		sections []int
		opts     []Option
	}{
		{"kind 0", 0, []int{8}, nil},
		{"no sections", KindRing, nil, nil},
		{"9 sections", KindRing, []int{1, 1, 1, 1, 1, 1, 1, 1, 1}, nil},
		{"zero section", KindRing, []int{8, 0}, nil},
		{"negative section", KindRing, []int{-8}, nil},
		{"huge section", KindRing, []int{1 << 41}, nil},
		{"mode bits", KindRing, []int{8}, []Option{WithMode(os.ModeSetuid | 0o600)}},
		{"liveness", KindRing, []int{8}, []Option{WithLivenessTimeout(time.Microsecond)}},
	} {
		_, err := create(dir, "bad", c.kind, c.sections, c.opts...)
		require.ErrorIs(t, err, ErrArgument, c.name)
	}
	_, err := CreateRing(dir, "ring", 1000)
	require.ErrorIs(t, err, ErrArgument)
	require.ErrorIs(t, err, ringbuf.ErrCapacity)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries)
}

// withFallocate replaces the preallocation call for one test.
func withFallocate(t *testing.T, fn func(fd int, size int64) error) {
	old := fallocate
	fallocate = fn
	t.Cleanup(func() { fallocate = old })
}

func TestCreateFallocateFallback(t *testing.T) {
	withFallocate(t, func(int, int64) error { return unix.EOPNOTSUPP })
	dir := testDir(t)
	r, err := CreateRing(dir, "zeros", 256<<10)
	require.NoError(t, err)
	defer r.Close()
	var st unix.Stat_t
	require.NoError(t, unix.Stat(r.File.Path(), &st))
	require.Equal(t, r.File.Len(), st.Size)
	require.GreaterOrEqual(t, st.Blocks*512, st.Size, "written zeros, not a sparse file")
	require.NoError(t, r.Write(1, []byte("ok")))
}

func TestCreateNoSpaceLeavesNothing(t *testing.T) {
	for _, direct := range []bool{false, true} {
		withFallocate(t, func(int, int64) error { return unix.ENOSPC })
		dir := testDir(t)
		var opts []Option
		if direct {
			opts = append(opts, withDirectCreate())
		}
		_, err := CreateRing(dir, "full", 1024, opts...)
		require.ErrorIs(t, err, errNoSpace)
		require.ErrorIs(t, err, syscall.ENOSPC)
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Empty(t, entries, "the half-made file is removed")
	}
}

func TestRefCounting(t *testing.T) {
	dir := testDir(t)
	f, err := create(dir, "refs", kindUserMin, []int{64})
	require.NoError(t, err)
	require.Equal(t, int64(1), f.refCount())
	require.True(t, mapped(t, f))

	require.NoError(t, f.acquire())
	require.NoError(t, f.acquire())
	require.Equal(t, int64(3), f.refCount())
	require.NoError(t, f.Close())
	require.NoError(t, f.Close(), "Close is idempotent")
	require.Equal(t, int64(2), f.refCount())
	s, err := f.Section(0)
	require.NoError(t, err, "still held")
	s[0] = 1
	require.NoError(t, f.release())
	require.True(t, mapped(t, f))
	require.NoError(t, f.release())
	require.Equal(t, int64(0), f.refCount())
	require.False(t, mapped(t, f), "the last release unmaps")

	_, err = f.Section(0)
	require.ErrorIs(t, err, ErrClosed)
	_, err = f.spareSlotAt(0)
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, f.acquire(), ErrClosed)
	require.ErrorIs(t, f.release(), ErrClosed)
	require.ErrorIs(t, f.Heartbeat(1), ErrClosed)
	_, err = f.heartbeatMillis()
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, f.checkSize(), ErrClosed)
	require.ErrorIs(t, f.Guard(func() error { return nil }), ErrClosed)
	require.ErrorIs(t, f.Remove(), ErrClosed)
	_, err = f.Liveness(time.Now(), 0)
	require.ErrorIs(t, err, ErrClosed)
	require.False(t, f.ownerAlive(time.Now()))
}

// TestRefCountingConcurrent: goroutines acquire and release while the
// owner's reference is dropped; the mapping goes away exactly once, after
// the last holder.
func TestRefCountingConcurrent(t *testing.T) {
	dir := testDir(t)
	f, err := create(dir, "conc", kindUserMin, []int{4096})
	require.NoError(t, err)
	var wg sync.WaitGroup
	start := make(chan struct{})
	const workers, rounds = 4, 2000
	for w := range workers {
		require.NoError(t, f.acquire()) // each worker's lifetime reference
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer f.release()
			<-start
			for i := range rounds {
				if err := f.acquire(); err != nil {
					t.Error(err)
					return
				}
				s, err := f.Section(0)
				if err != nil {
					t.Error(err)
				} else {
					s[w] = byte(i)
				}
				if err := f.release(); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	close(start)
	require.NoError(t, f.Close())
	wg.Wait()
	require.Equal(t, int64(0), f.refCount())
	require.False(t, mapped(t, f))
	require.ErrorIs(t, f.acquire(), ErrClosed)
}

func TestOwnerCloseMarksClosed(t *testing.T) {
	dir := testDir(t)
	f, err := create(dir, "closing", kindUserMin, []int{8})
	require.NoError(t, err)
	g, err := open(ctxT(t), f.Path())
	require.NoError(t, err)
	defer g.Close()
	require.True(t, g.ownerAlive(time.Now()))
	require.ErrorIs(t, RemoveIfStale(f.Path()), ErrOwnerAlive, "the owner holds its lock")

	require.NoError(t, f.Close())
	hb, err := g.heartbeatMillis()
	require.NoError(t, err)
	require.Equal(t, heartbeatClosed, hb)
	l, err := g.Liveness(time.Now(), 0)
	require.NoError(t, err)
	require.Equal(t, OwnerClosed, l.State)
	require.True(t, l.Running, "the owner's process is this one")
	require.False(t, g.ownerAlive(time.Now()))
	require.ErrorIs(t, g.checkOwner(time.Now(), 0), ErrOwnerDead)

	_, err = open(ctxT(t), f.Path(), withLiveOwner())
	require.ErrorIs(t, err, ErrOwnerDead)

	require.NoError(t, RemoveIfStale(f.Path()), "a closed file is removable at once")
	_, err = os.Stat(f.Path())
	require.ErrorIs(t, err, fs.ErrNotExist)
	s, err := g.Section(0)
	require.NoError(t, err, "removal does not affect existing mappings")
	s[0] = 1
}

func TestOwnerOnlyOperations(t *testing.T) {
	dir := testDir(t)
	f, err := create(dir, "owned", kindUserMin, []int{8})
	require.NoError(t, err)
	defer f.Close()
	g, err := open(ctxT(t), f.Path())
	require.NoError(t, err)
	defer g.Close()
	require.ErrorIs(t, g.Heartbeat(1), ErrNotOwner)
	require.ErrorIs(t, g.Remove(), ErrNotOwner)

	require.NoError(t, f.Heartbeat(12345))
	hb, err := g.heartbeatMillis()
	require.NoError(t, err)
	require.Equal(t, int64(12345), hb)

	require.NoError(t, f.Remove())
	_, err = os.Stat(f.Path())
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.Error(t, f.Remove(), "already gone")
	require.NoError(t, f.Heartbeat(23456), "the mapping outlives the name")
}

// TestOwnerRemoveSparesReplacement: an owner whose name was taken over by a
// new file does not remove the new one.
func TestOwnerRemoveSparesReplacement(t *testing.T) {
	dir := testDir(t)
	f, err := create(dir, "name", kindUserMin, []int{8})
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, os.Rename(f.Path(), filepath.Join(dir, "moved")))
	g, err := create(dir, "name", kindUserMin, []int{8})
	require.NoError(t, err)
	defer g.Close()
	require.ErrorIs(t, f.Remove(), ErrOwnerAlive)
	_, err = os.Stat(g.Path())
	require.NoError(t, err)
}

func TestRingOverFile(t *testing.T) {
	dir := testDir(t)
	r, err := CreateRing(dir, "ring", 1024)
	require.NoError(t, err)
	defer r.Close()
	require.Equal(t, 1024, r.Capacity())
	require.Equal(t, KindRing, r.File.Kind())
	b, err := r.File.Section(0)
	require.NoError(t, err)
	require.Len(t, b, 1024+ringbuf.TrailerLength)

	o, err := OpenRing(ctxT(t), r.File.Path())
	require.NoError(t, err)
	defer o.Close()
	for i := range 100 {
		require.NoError(t, o.Write(testTypeID, []byte{byte(i), 1, 2, 3}))
		var got []byte
		n, err := r.Read(func(typeID int32, p []byte) {
			require.Equal(t, int32(testTypeID), typeID)
			got = append(got, p...)
		}, ringbuf.NoLimit)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Equal(t, []byte{byte(i), 1, 2, 3}, got)
	}
	require.Equal(t, int64(0), r.NextCorrelationID())
	require.Equal(t, int64(1), o.NextCorrelationID(), "one counter in shared memory")
}

func TestRingAllocations(t *testing.T) {
	dir := testDir(t)
	r, err := CreateRing(dir, "alloc", 64<<10)
	require.NoError(t, err)
	defer r.Close()
	payload := make([]byte, 32)
	h := func(int32, []byte) {}
	allocs := testing.AllocsPerRun(1000, func() {
		if err := r.Write(testTypeID, payload); err != nil {
			panic(err)
		}
		if _, err := r.Read(h, ringbuf.NoLimit); err != nil {
			panic(err)
		}
	})
	require.Zero(t, allocs)
}

func TestOpenWaitsForFile(t *testing.T) {
	dir := testDir(t)
	path := filepath.Join(dir, "later")
	_, err := open(ctxT(t), path)
	require.ErrorIs(t, err, fs.ErrNotExist)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = open(ctx, path, WithWaitForFile())
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	done := make(chan error, 1)
	go func() {
		f, err := open(ctxT(t), path, WithWaitForFile())
		if err == nil {
			err = f.Close()
		}
		done <- err
	}()
	time.Sleep(10 * time.Millisecond) // let Open poll a few times (not an assertion)
	f, err := create(dir, "later", kindUserMin, []int{8})
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, <-done)
}

func TestReplaceStale(t *testing.T) {
	dir := testDir(t)
	for _, direct := range []bool{false, true} {
		opts := []Option{WithReplaceStale()}
		if direct {
			opts = append(opts, withDirectCreate())
		}
		f, err := create(dir, "replace", kindUserMin, []int{8})
		require.NoError(t, err)
		_, err = create(dir, "replace", kindUserMin, []int{8}, opts...)
		require.ErrorIs(t, err, ErrOwnerAlive, "a live owner's file is never replaced")
		require.NoError(t, f.Close())
		g, err := create(dir, "replace", kindUserMin, []int{16}, opts...)
		require.NoError(t, err, "a closed owner's file is replaced")
		require.Equal(t, 16, mustLen(t, g, 0))
		require.NoError(t, g.Remove())
		require.NoError(t, g.Close())
	}
}

func mustLen(t *testing.T, f *File, i int) int {
	s, err := f.Section(i)
	require.NoError(t, err)
	return len(s)
}

func TestErrorsMessages(t *testing.T) {
	ve := &versionError{Path: "p", Found: 9, Supported: 1}
	require.ErrorIs(t, ve, ErrVersion)
	require.Contains(t, ve.Error(), "9")
	fe := &faultError{Addr: 0x10, Truncated: true, Size: 0, Mapped: 8192}
	require.ErrorIs(t, fe, ErrFault)
	require.ErrorIs(t, fe, ErrTruncated)
	require.False(t, errors.Is(&faultError{Addr: 1}, ErrTruncated))
	require.ErrorIs(t, errPermission, fs.ErrPermission)
	require.ErrorIs(t, errExists, fs.ErrExist)
	for _, err := range []error{ErrNotDutyFile, ErrVersion, ErrTruncated, ErrNotReady, ErrCorrupt, ErrKind,
		ErrOwnerAlive, ErrOwnerDead, ErrNotOwner, ErrClosed, ErrFault, errName, ErrArgument, errNoSpace, errPermission, errExists} {
		require.True(t, strings.HasPrefix(err.Error(), "ipc: "), err.Error())
	}
}

// TestCloseAfterOverRelease: a caller that released the reference Close
// owns gets ErrClosed from Close, and the owner's closed mark is not
// written into memory that is no longer mapped.
func TestCloseAfterOverRelease(t *testing.T) {
	dir := testDir(t)
	f, err := create(dir, "over", kindUserMin, []int{8})
	require.NoError(t, err)
	require.NoError(t, f.release())
	require.False(t, mapped(t, f))
	require.ErrorIs(t, f.Close(), ErrClosed)
	require.NoError(t, f.Close(), "idempotent")
	// The lock went with the descriptor: the file is removable once stale.
	require.ErrorIs(t, RemoveIfStale(f.Path()), ErrOwnerAlive, "heartbeat fresh, this process alive: OwnerAlive")
}

func TestPopulate(t *testing.T) {
	dir := testDir(t)
	r, err := CreateRing(dir, "populated", 64<<10, WithPopulate())
	require.NoError(t, err)
	defer r.Close()
	o, err := OpenRing(ctxT(t), r.File.Path(), WithPopulate())
	require.NoError(t, err)
	defer o.Close()
	require.NoError(t, o.Write(testTypeID, []byte("p")))
	require.Equal(t, 1, r.poll(t))
}

// Create over a file whose owner is gone says how to replace it; over a
// live owner's file it does not.
func TestCreateOverAStaleFileSaysHowToReplaceIt(t *testing.T) {
	for _, direct := range []bool{false, true} {
		dir := t.TempDir()
		var opts []Option
		if direct {
			opts = append(opts, withDirectCreate())
		}
		live, err := create(dir, "x", kindUserMin, []int{8}, opts...)
		require.NoError(t, err)
		_, err = create(dir, "x", kindUserMin, []int{8}, opts...)
		require.ErrorIs(t, err, errExists)
		require.NotContains(t, err.Error(), "WithReplaceStale", "its owner is alive")

		require.NoError(t, live.Close()) // closed without Remove: a stale file
		_, err = create(dir, "x", kindUserMin, []int{8}, opts...)
		require.ErrorIs(t, err, errExists)
		require.ErrorContains(t, err, "its owner is gone: Create with WithReplaceStale replaces it")

		f, err := create(dir, "x", kindUserMin, []int{8}, append(opts, WithReplaceStale())...)
		require.NoError(t, err)
		require.NoError(t, f.Remove())
		require.NoError(t, f.Close())
	}
}
