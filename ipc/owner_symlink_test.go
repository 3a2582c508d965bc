package ipc

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/clock"
)

// TestRemoveIfStaleSymlink: RemoveIfStale never follows a symbolic link. On
// a link (to a stale duty file, to a directory, dangling, or to itself) it
// returns ErrNotDutyFile with the path and removes neither the link nor
// what it points at, although the duty file it points at is stale.
func TestRemoveIfStaleSymlink(t *testing.T) {
	dir := testDir(t)
	elsewhere := testDir(t)
	now := time.Now()
	at := WithClock(clock.Func(func() time.Time { return now }))
	stale := writeImage(t, elsewhere, "stale", staleImage(t, now))
	sub := filepath.Join(elsewhere, "sub")
	require.NoError(t, os.Mkdir(sub, 0o700))
	links := map[string]string{
		"to-stale": stale,
		"to-dir":   sub,
		"dangling": filepath.Join(elsewhere, "missing"),
	}
	for name, target := range links {
		require.NoError(t, os.Symlink(target, filepath.Join(dir, name)))
	}
	links["loop"] = filepath.Join(dir, "loop")
	require.NoError(t, os.Symlink(links["loop"], links["loop"]))

	for name, target := range links {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			err := RemoveIfStale(path, at)
			require.ErrorIs(t, err, ErrNotDutyFile)
			require.Contains(t, err.Error(), path)
			require.Contains(t, err.Error(), "symbolic link")
			fi, err := os.Lstat(path)
			require.NoError(t, err, "the link stays")
			require.Equal(t, os.ModeSymlink, fi.Mode().Type())
			if name != "dangling" {
				_, err = os.Lstat(target)
				require.NoError(t, err, "its target stays")
			}
		})
	}
	require.NoError(t, RemoveIfStale(stale, at), "the target itself is stale")
}

// TestCleanupSymlinks: Cleanup skips symbolic links in the directory,
// whatever they point at: it removes the stale duty file that is in the
// directory, but neither a link to it, nor a stale duty file outside the
// directory that a link points at, nor any link.
func TestCleanupSymlinks(t *testing.T) {
	dir := testDir(t)
	elsewhere := testDir(t)
	now := time.Now()
	inside := writeImage(t, dir, "stale", staleImage(t, now))
	outside := writeImage(t, elsewhere, "stale", staleImage(t, now))
	for name, target := range map[string]string{
		"to-inside":  inside,
		"to-outside": outside,
		"to-dir":     elsewhere,
		"dangling":   filepath.Join(elsewhere, "missing"),
	} {
		require.NoError(t, os.Symlink(target, filepath.Join(dir, name)))
	}
	require.NoError(t, os.Symlink(filepath.Join(dir, "loop"), filepath.Join(dir, "loop")))

	removed, err := Cleanup(dir, WithClock(clock.Func(func() time.Time { return now })))
	require.NoError(t, err)
	require.Equal(t, []string{"stale"}, removed)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var left []string
	for _, e := range ents {
		require.Equal(t, os.ModeSymlink, e.Type(), e.Name())
		left = append(left, e.Name())
	}
	require.ElementsMatch(t, []string{"to-inside", "to-outside", "to-dir", "dangling", "loop"}, left)
	_, err = os.Stat(outside)
	require.NoError(t, err, "a stale file outside the directory is not Cleanup's")
}

// staleImage is a valid ring file whose owner is dead (a reaped child's
// pid) and whose heartbeat is an hour older than now.
func staleImage(t *testing.T, now time.Time) []byte {
	b := validImage(t)
	binary.LittleEndian.PutUint64(b[ownerPIDOffset:], uint64(deadPID(t)))
	binary.LittleEndian.PutUint64(b[heartbeatOffset:], uint64(now.Add(-time.Hour).UnixMilli()))
	return b
}
