package ipc

import (
	"encoding/binary"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/internal/mmapfile"
	"github.com/dutyrt/duty/internal/procinfo"
)

// The start time Create stores as the owner's is this process's in the
// process table, by which procinfo.Running tells it from a reused pid
// (internal/procinfo tests the liveness rules themselves).
func TestSelfStartTimeIsThisProcess(t *testing.T) {
	start, gone, known := procinfo.Info(os.Getpid())
	require.True(t, known, "this platform's process table answers for this process")
	require.False(t, gone)
	require.NotZero(t, start)
	require.Equal(t, start, selfStartTime())
	require.True(t, procinfo.Running(os.Getpid(), selfStartTime()))
}

// deadPID returns the pid of a child of this test that has exited and been
// reaped.
func deadPID(t *testing.T) int {
	p := startChild(t, "", "exit").Start(t)
	require.NoError(t, p.Wait(t))
	return p.Cmd.Process.Pid
}

// TestLivenessRules forges owner fields and checks the state, and what
// RemoveIfStale does, for each combination. The forged files are written by
// this test, so nobody holds their lock unless the case says so (locked:
// the test holds it, as an owner in another pid namespace would): a free
// lock and no process is a dead owner, however fresh its heartbeat.
func TestLivenessRules(t *testing.T) {
	dir := testDir(t)
	now := time.Now()
	self, selfStart := int64(os.Getpid()), int64(selfStartTime())
	dead := int64(deadPID(t))
	fresh, stale := now.UnixMilli()-1000, now.UnixMilli()-60_000
	for _, c := range []struct {
		name       string
		pid, start int64
		heartbeat  int64
		state      OwnerState
		running    bool
		locked     bool
	}{
		{"alive", self, selfStart, fresh, OwnerAlive, true, false},
		{"hung", self, selfStart, stale, OwnerHung, true, false},
		{"pid reused, stale", self, selfStart + 1, stale, OwnerDead, false, false},
		{"pid reused, fresh", self, selfStart + 1, fresh, OwnerDead, false, false},
		{"pid reused, fresh, locked", self, selfStart + 1, fresh, OwnerUnconfirmed, false, true},
		{"pid gone, stale", dead, 0, stale, OwnerDead, false, false},
		{"pid gone, stale, locked", dead, 0, stale, OwnerDead, false, true},
		{"pid gone, fresh", dead, 0, fresh, OwnerDead, false, false},
		{"pid gone, fresh, locked", dead, 0, fresh, OwnerUnconfirmed, false, true},
		{"closed", self, selfStart, heartbeatClosed, OwnerClosed, true, false},
		{"closed, pid gone", dead, 0, heartbeatClosed, OwnerClosed, false, false},
		{"pid 0", 0, 0, stale, OwnerDead, false, false},
		{"heartbeat far in the future", dead, 0, now.UnixMilli() + 3_600_000, OwnerDead, false, false},
		{"heartbeat slightly ahead", self, selfStart, now.UnixMilli() + 500, OwnerAlive, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := validImage(t)
			le := binary.LittleEndian
			le.PutUint64(b[ownerPIDOffset:], uint64(c.pid))
			le.PutUint64(b[ownerStartTimeOffset:], uint64(c.start))
			le.PutUint64(b[heartbeatOffset:], uint64(c.heartbeat))
			path := writeImage(t, dir, "owner", b)
			unlock := func() {}
			if c.locked {
				lf, err := os.Open(path)
				require.NoError(t, err)
				locked, err := mmapfile.TryLock(int(lf.Fd()))
				require.NoError(t, err)
				require.True(t, locked)
				unlock = func() { _ = lf.Close() }
			}

			f, err := open(ctxT(t), path)
			require.NoError(t, err)
			l, err := f.Liveness(now, 0)
			require.NoError(t, err)
			require.Equal(t, c.state, l.State, l.describe())
			require.Equal(t, c.running, l.Running)
			require.Equal(t, int(c.pid), l.PID)
			require.Equal(t, 10*time.Second, l.Timeout)
			require.Equal(t, c.state == OwnerAlive, f.ownerAlive(now))
			if c.state == OwnerAlive || c.state == OwnerUnconfirmed {
				require.NoError(t, f.checkOwner(now, 0))
			} else {
				require.ErrorIs(t, f.checkOwner(now, 0), ErrOwnerDead)
			}
			require.NoError(t, f.Close())

			err = RemoveIfStale(path, WithClock(clock.Func(func() time.Time { return now })))
			unlock()
			if (c.state == OwnerDead || c.state == OwnerClosed) && !c.locked {
				require.NoError(t, err)
				_, err = os.Stat(path)
				require.ErrorIs(t, err, fs.ErrNotExist)
			} else {
				require.ErrorIs(t, err, ErrOwnerAlive)
				_, err = os.Stat(path)
				require.NoError(t, err, "not removed")
			}
		})
	}
}

// TestLivenessTimeoutOverride: WithLivenessTimeout decides when a file
// left half-created (version 0, nobody holding its lock) is abandoned.
func TestLivenessTimeoutOverride(t *testing.T) {
	dir := testDir(t)
	b := validImage(t)
	le := binary.LittleEndian
	now := time.Now()
	le.PutUint64(b[ownerPIDOffset:], uint64(deadPID(t)))
	le.PutUint32(b[versionOffset:], 0)
	path := writeImage(t, dir, "t", b)
	require.NoError(t, os.Chtimes(path, now.Add(-5*time.Second), now.Add(-5*time.Second)))
	at := WithClock(clock.Func(func() time.Time { return now }))
	require.ErrorIs(t, RemoveIfStale(path, at), ErrOwnerAlive, "5 s < the default 10 s")
	require.NoError(t, RemoveIfStale(path, at, WithLivenessTimeout(time.Second)), "5 s > 1 s")
}

// TestRemoveIfStaleLiveOwnerLock: whatever the clock says, a file whose
// owner holds its lock is never removed.
func TestRemoveIfStaleLiveOwnerLock(t *testing.T) {
	dir := testDir(t)
	f, err := create(dir, "locked", kindUserMin, []int{8})
	require.NoError(t, err)
	defer f.Close()
	far := WithClock(clock.Func(func() time.Time { return time.Now().Add(24 * time.Hour) }))
	err = RemoveIfStale(f.Path(), far)
	require.ErrorIs(t, err, ErrOwnerAlive)
	require.Contains(t, err.Error(), "lock")
	_, err = Cleanup(dir, far)
	require.NoError(t, err)
	_, err = os.Stat(f.Path())
	require.NoError(t, err)
}

func TestRemoveIfStaleErrors(t *testing.T) {
	dir := testDir(t)
	require.ErrorIs(t, RemoveIfStale(filepath.Join(dir, "missing")), fs.ErrNotExist)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o700))
	require.ErrorIs(t, RemoveIfStale(filepath.Join(dir, "sub")), ErrNotDutyFile)
	target := writeImage(t, dir, "target", make([]byte, 10))
	require.NoError(t, os.Symlink(target, filepath.Join(dir, "link")))
	require.ErrorIs(t, RemoveIfStale(filepath.Join(dir, "link")), ErrNotDutyFile, "symlinks are not followed")
	_, err := os.Lstat(filepath.Join(dir, "link"))
	require.NoError(t, err)
}

// TestCleanup fills a directory with every kind of file and checks that
// exactly the stale ones are removed.
func TestCleanup(t *testing.T) {
	dir := testDir(t)
	now := time.Now()
	old := now.Add(-time.Hour)
	le := binary.LittleEndian
	dead := deadPID(t)

	live, err := create(dir, "live", kindUserMin, []int{8})
	require.NoError(t, err)
	defer live.Close()
	closed, err := create(dir, "closed", kindUserMin, []int{8})
	require.NoError(t, err)
	require.NoError(t, closed.Close())

	forge := func(name string, pid int, hb int64, version int32) {
		b := validImage(t)
		le.PutUint64(b[ownerPIDOffset:], uint64(pid))
		le.PutUint64(b[heartbeatOffset:], uint64(hb))
		le.PutUint32(b[versionOffset:], uint32(version))
		writeImage(t, dir, name, b)
	}
	forge("dead", dead, old.UnixMilli(), fileLayoutVersion)
	forge("hung", os.Getpid(), old.UnixMilli(), fileLayoutVersion)
	forge("recent", dead, now.UnixMilli(), fileLayoutVersion)
	forge("future-version", dead, old.UnixMilli(), fileLayoutVersion+1)
	forge("unfinished-old", dead, old.UnixMilli(), 0)
	forge("unfinished-young", dead, old.UnixMilli(), 0)
	writeImage(t, dir, "foreign-short", []byte("hello"))
	writeImage(t, dir, "foreign-long", append([]byte("#!/bin/sh\n"), make([]byte, 5000)...))
	writeImage(t, dir, "empty-young", nil)
	writeImage(t, dir, "empty-old", nil)
	writeImage(t, dir, tempPrefix+"x.1.abcd", nil)
	writeImage(t, dir, tempPrefix+"y.1.abcd", make([]byte, 100))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "subdir"), 0o700))
	for _, name := range []string{"unfinished-old", "empty-old", tempPrefix + "x.1.abcd", "foreign-short", "foreign-long"} {
		require.NoError(t, os.Chtimes(filepath.Join(dir, name), old, old))
	}

	removed, err := Cleanup(dir, WithClock(clock.Func(func() time.Time { return now })))
	require.NoError(t, err)
	sort.Strings(removed)
	// "recent": a fresh heartbeat, but no process and nobody holds the lock.
	require.Equal(t, []string{tempPrefix + "x.1.abcd", "closed", "dead", "empty-old", "recent", "unfinished-old"}, removed)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var left []string
	for _, e := range ents {
		left = append(left, e.Name())
	}
	require.ElementsMatch(t, []string{tempPrefix + "y.1.abcd", "empty-young", "foreign-long", "foreign-short",
		"future-version", "hung", "live", "subdir", "unfinished-young"}, left)

	removed, err = Cleanup(filepath.Join(dir, "missing"))
	require.NoError(t, err)
	require.Empty(t, removed)
}
