package mmapfile

import (
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// PopulateWrite maps every page of a range that is not a whole number of
// its chunks, writable: storing into each page afterwards takes (almost)
// no page fault, counted on this thread. The bytes stay as they were.
func TestPopulateWriteEveryChunk(t *testing.T) {
	page := os.Getpagesize()
	size := 3*populateChunk + 5*page
	f := newFile(t, int64(size))
	b, err := Map(int(f.Fd()), int64(size), true, false)
	require.NoError(t, err)
	defer Unmap(b)
	if err := PopulateWrite(b); err == ErrUnsupported {
		t.Skip("the kernel cannot populate (MADV_POPULATE_WRITE)")
	} else {
		require.NoError(t, err)
	}
	for _, c := range b {
		require.Zero(t, c)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var before, after unix.Rusage
	require.NoError(t, unix.Getrusage(unix.RUSAGE_THREAD, &before))
	for i := 0; i < size; i += page {
		b[i] = 1
	}
	require.NoError(t, unix.Getrusage(unix.RUSAGE_THREAD, &after))
	require.Less(t, after.Minflt-before.Minflt, int64(size/page/10), "faults storing into %d populated pages", size/page)
}
