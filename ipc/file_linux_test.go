package ipc

import (
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestCreateFullTmpfs fills a real, small tmpfs: the statfs check refuses
// a file larger than the free space, and fallocate itself fails (ENOSPC,
// not a later SIGBUS) when the check is passed by a racing consumer of
// space. Needs root to mount.
func TestCreateFullTmpfs(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to mount a small tmpfs")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=256k"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })

	_, err := CreateRing(dir, "too-big", 512<<10)
	require.ErrorIs(t, err, errNoSpace)
	require.ErrorIs(t, err, syscall.ENOSPC)

	// Two files that each pass the check, one after the other, until the
	// file system is full: fallocate reports it.
	var files []*Ring
	defer func() {
		for _, r := range files {
			r.Close()
		}
	}()
	for i := 0; ; i++ {
		require.Less(t, i, 10, "tmpfs never filled up")
		// Take space behind the check's back, then create.
		r, err := CreateRing(dir, "r"+strconv.Itoa(i), 32<<10)
		if err != nil {
			require.ErrorIs(t, err, errNoSpace)
			require.ErrorIs(t, err, syscall.ENOSPC)
			break
		}
		files = append(files, r)
	}
	old := checkSpaceFn
	checkSpaceFn = func(string, int64) error { return nil }
	defer func() { checkSpaceFn = old }()
	_, err = CreateRing(dir, "past-check", 64<<10)
	require.ErrorIs(t, err, errNoSpace, "fallocate's own ENOSPC")
	require.ErrorIs(t, err, syscall.ENOSPC)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, len(files), "failed creations leave nothing")
}
