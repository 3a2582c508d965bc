package journal

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

const testSegment = MinSegmentSize

var quiet = slog.New(slog.DiscardHandler)

// testDir returns a fresh directory, removed after the test.
func testDir(t testing.TB) string {
	t.Helper()
	return t.TempDir()
}

// fastDir returns a fresh directory on /dev/shm where it exists (syncs
// cost nothing there: for the fuzz target), removed after the test.
func fastDir(t testing.TB) string {
	t.Helper()
	base := ""
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		base = "/dev/shm"
	}
	dir, err := os.MkdirTemp(base, "duty-journal-fuzz-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// soak multiplies iteration counts by DUTY_SOAK (default 1).
func soak(n int) int {
	if f, err := strconv.Atoi(os.Getenv("DUTY_SOAK")); err == nil && f > 1 {
		return n * f
	}
	return n
}

// testBody fills b with a body that checkBody recognises: the stream and
// sequence, then bytes derived from them, then a CRC of the rest.
func testBody(b []byte, stream uint32, seq int64) {
	if len(b) < 16 {
		panic("short test body")
	}
	binary.LittleEndian.PutUint32(b[0:], stream)
	binary.LittleEndian.PutUint64(b[4:], uint64(seq))
	for i := 16; i < len(b); i++ {
		b[i] = byte(int64(stream)*131 + seq*31 + int64(i))
	}
	binary.LittleEndian.PutUint32(b[12:], crc32.ChecksumIEEE(b[16:])^uint32(seq))
}

func bodyLen(seq int64) int { return 16 + int(seq*37%300) }

func checkBody(b []byte, stream uint32, seq int64) error {
	if len(b) != bodyLen(seq) {
		return fmt.Errorf("stream %d seq %d: body of %d bytes, want %d", stream, seq, len(b), bodyLen(seq))
	}
	want := make([]byte, len(b))
	testBody(want, stream, seq)
	if string(want) != string(b) {
		return fmt.Errorf("stream %d seq %d: body differs", stream, seq)
	}
	return nil
}

// appendN appends n records to stream, continuing its sequence (t may be
// nil in a child process: then it panics on an error).
func appendN(t testing.TB, j *Journal, stream uint32, n int) {
	must := func(err error) {
		if t == nil && err != nil {
			panic(err)
		}
		if t != nil {
			t.Helper()
			require.NoError(t, err)
		}
	}
	for range n {
		seq := j.nextSequence(stream)
		c, err := j.Claim(stream, 7, bodyLen(seq))
		must(err)
		if c.Sequence != seq {
			must(fmt.Errorf("claim sequence %d, want %d", c.Sequence, seq))
		}
		testBody(c.Body(), stream, seq)
		must(j.Commit())
	}
}

// readAll reads every record from the start and checks their bodies and
// per-stream order; it returns the count per stream.
func readAll(t testing.TB, j *Journal) map[uint32]int64 {
	t.Helper()
	tl, err := j.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	next := map[uint32]int64{}
	for {
		r, ok, err := tl.Next()
		require.NoError(t, err)
		if !ok {
			return next
		}
		require.Equal(t, next[r.StreamID], r.Sequence, "stream %d out of order", r.StreamID)
		require.NoError(t, checkBody(r.Body, r.StreamID, r.Sequence))
		next[r.StreamID]++
	}
}

func openT(t testing.TB, dir string, o Options) *Journal {
	t.Helper()
	if o.SegmentSize == 0 {
		o.SegmentSize = testSegment
	}
	if o.Logger == nil {
		o.Logger = quiet
	}
	j, err := Open(dir, o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = j.Close() })
	return j
}
