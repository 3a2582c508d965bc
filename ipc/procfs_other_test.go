//go:build !linux

package ipc

import "testing"

// Without /proc/self (procfs_linux_test.go), whether this process still
// maps a file, or holds a descriptor of it, cannot be read: the test that
// asks is skipped from there on (what it checked before still counts).

func mapped(t *testing.T, f *File) bool { return mappedIno(t, f.ino) }

func mappedIno(t *testing.T, ino uint64) bool {
	t.Helper()
	t.Skipf("no /proc/self/maps to look for inode %d in", ino)
	return false
}

func openFDs(t *testing.T, path string) int {
	t.Helper()
	t.Skipf("no /proc/self/fd to count the descriptors of %s in", path)
	return 0
}
