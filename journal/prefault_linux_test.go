package journal

import (
	"runtime"
	"testing"

	"github.com/dutyrt/duty/internal/journalfile"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// A Flusher faults in the pages ahead of the writer: the writer's stores
// to them then take (almost) no page fault, counted on its own thread.
func TestFlusherPrefaultsAhead(t *testing.T) {
	const window = 1 << 20
	j := openT(t, testDir(t), Options{SegmentSize: 4 << 20, PrefaultBytes: window})
	_, _, err := j.Append(1, 1, make([]byte, 3)) // an unaligned writer position
	require.NoError(t, err)
	f := j.Flusher()
	_, err = f.DoWork()
	require.NoError(t, err)
	if j.prefaultOff {
		t.Skip("the kernel cannot pre-fault (MADV_POPULATE_WRITE)")
	}
	require.GreaterOrEqual(t, j.prefaulted, j.committed.Load()+window)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var before, after unix.Rusage
	require.NoError(t, unix.Getrusage(unix.RUSAGE_THREAD, &before))
	const n = window / 1024 * 3 / 4 // records of 1 KiB, three quarters of the window
	s, err := j.Stream(1)
	require.NoError(t, err)
	for range n {
		c, err := s.ClaimAt(1, 1024-journalfile.RecordHeaderLength, 1)
		if err != nil {
			t.Fatal(err)
		}
		c.Body()[0] = 1
		if err := j.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	require.NoError(t, unix.Getrusage(unix.RUSAGE_THREAD, &after))
	pages := int64(n * 1024 / 4096)
	require.Less(t, after.Minflt-before.Minflt, pages/4, "faults on %d pages written", pages)
	_, err = f.DoWork()
	require.NoError(t, err)
	require.GreaterOrEqual(t, j.prefaulted, j.committed.Load()+window*3/4, "the window moves with the writer")
}
