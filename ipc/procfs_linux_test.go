package ipc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// Test helpers that read /proc/self: Linux only. Elsewhere
// (procfs_other_test.go) they skip the rest of the test that calls them.

// mapped reports whether this process maps f's inode (from
// /proc/self/maps: the path there is the one mapped, which for a file
// built under a temporary name is that name).
func mapped(t *testing.T, f *File) bool { return mappedIno(t, f.ino) }

func mappedIno(t *testing.T, ino uint64) bool {
	b, err := os.ReadFile("/proc/self/maps")
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 5 && fields[4] == strconv.FormatUint(ino, 10) {
			return true
		}
	}
	return false
}

// openFDs counts this process's descriptors and mappings of path.
func openFDs(t *testing.T, path string) int {
	var st unix.Stat_t
	require.NoError(t, unix.Stat(path, &st))
	n := 0
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	for _, e := range ents {
		var fst unix.Stat_t
		if unix.Stat(filepath.Join("/proc/self/fd", e.Name()), &fst) == nil && fst.Ino == st.Ino && fst.Dev == st.Dev {
			n++
		}
	}
	if mappedIno(t, st.Ino) {
		n++
	}
	return n
}
