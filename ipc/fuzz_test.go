package ipc

import (
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/record"
	"github.com/dutyrt/duty/ringbuf"
)

// openErrors are the errors Open, OpenRing and RemoveIfStale may return
// for a bad file.
var openErrors = []error{ErrNotDutyFile, ErrVersion, ErrTruncated, ErrNotReady, ErrCorrupt, ErrKind,
	ErrOwnerAlive, ErrOwnerDead, errPermission, fs.ErrNotExist}

func requireTyped(t *testing.T, err error) {
	t.Helper()
	for _, want := range openErrors {
		if errors.Is(err, want) {
			return
		}
	}
	t.Fatalf("untyped error: %v", err)
}

// FuzzOpenHeader writes a file from a valid ring file with fuzzed header
// bytes, one fuzzed word and a fuzzed size, and opens it: Open returns a
// typed error or a valid file (whose ring then works), and never panics,
// faults or hangs (a short context bounds the wait for files that look
// unfinished). RemoveIfStale on the same file obeys the same rule.
func FuzzOpenHeader(f *testing.F) {
	f.Add([]byte(nil), uint16(0), uint64(0), uint32(8192), false)
	f.Add([]byte("NOTDUTY!"), uint16(0), uint64(0), uint32(8192), false)
	f.Add([]byte(nil), uint16(versionOffset), uint64(2), uint32(8192), true)
	f.Add([]byte(nil), uint16(versionOffset), uint64(0), uint32(8192), false)
	f.Add([]byte(nil), uint16(fileLengthOffset), uint64(1<<62), uint32(8192), false)
	f.Add([]byte(nil), uint16(sectionEntry(0)+sectionLengthField), uint64(4096), uint32(8192), false)
	f.Add([]byte(nil), uint16(heartbeatOffset), uint64(1), uint32(8192), true)
	f.Add(make([]byte, 4096), uint16(0), uint64(0), uint32(4096), false)
	f.Add([]byte(nil), uint16(0), uint64(0), uint32(0), false)
	f.Add([]byte(nil), uint16(0), uint64(0), uint32(5000), false)
	f.Fuzz(func(t *testing.T, prefix []byte, off uint16, word uint64, size uint32, patch bool) {
		b := validImage(t)
		copy(b[:headerLength], prefix)
		if patch || off != 0 || word != 0 {
			binary.LittleEndian.PutUint64(b[int(off)%(headerLength/8)*8:], word)
		}
		n := int(size % 20000)
		if n <= len(b) {
			b = b[:n]
		} else {
			b = append(b, make([]byte, n-len(b))...)
		}
		dir := testDir(t)
		path := writeImage(t, dir, "fuzz", b)

		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Millisecond)
		defer cancel()
		r, err := OpenRing(ctx, path, withPollInterval(time.Millisecond))
		if err != nil {
			requireTyped(t, err)
			require.Nil(t, r)
		} else {
			require.LessOrEqual(t, r.File.Len(), int64(n))
			for i := range r.File.sectionCount() {
				s, err := r.File.Section(i)
				require.NoError(t, err)
				require.NotEmpty(t, s)
			}
			// The ring may hold fuzzed bytes too: only typed results.
			if err := r.Write(testTypeID, []byte("after open")); err != nil {
				require.True(t, errors.Is(err, ringbuf.ErrFull) || errors.Is(err, ringbuf.ErrCorrupt), "%v", err)
			}
			if _, err := r.Read(func(int32, []byte) {}, ringbuf.NoLimit); err != nil {
				require.ErrorIs(t, err, ringbuf.ErrCorrupt)
			}
			_, _ = r.File.Liveness(time.Now(), 0)
			require.NoError(t, r.Close())
		}
		if err := RemoveIfStale(path); err != nil {
			requireTyped(t, err)
		}
	})
}

// FuzzRingInFile fills the ring section of a ring file with fuzzed bytes
// (records and trailer: head, tail, head cache) and uses it from a second
// mapping: Read returns messages or ringbuf.ErrCorrupt, Unblock and Write
// return typed results, and nothing panics, faults or hangs.
func FuzzRingInFile(f *testing.F) {
	const capacity = 1024
	rec := func(length, typeID int32, payload string) []byte {
		b := make([]byte, 8, 8+len(payload))
		binary.LittleEndian.PutUint32(b, uint32(length))
		binary.LittleEndian.PutUint32(b[4:], uint32(typeID))
		return append(b, payload...)
	}
	f.Add(rec(13, 1, "hello"), int64(0), int64(16))
	f.Add(rec(-16, 1, "claimed!"), int64(0), int64(16))
	f.Add(rec(1<<30, 1, "long"), int64(0), int64(64))
	f.Add(rec(16, -1, "padding!"), int64(0), int64(16))
	f.Add(rec(12, 0, "bad!"), int64(8), int64(1000))
	f.Add([]byte{}, int64(-8), int64(1<<62))
	f.Add(rec(8, 5, ""), int64(3), int64(5))
	f.Fuzz(func(t *testing.T, records []byte, head, tail int64) {
		dir := testDir(t)
		w, err := CreateRing(dir, "ring", capacity)
		require.NoError(t, err)
		defer w.Close()
		s, err := w.File.Section(0)
		require.NoError(t, err)
		for i := 0; i < capacity; i += max(len(records), 1) { // repeat the records over the ring
			if len(records) == 0 {
				break
			}
			copy(s[i:capacity], records)
		}
		le := binary.LittleEndian
		le.PutUint64(s[capacity+record.TailOffset:], uint64(tail))
		le.PutUint64(s[capacity+record.HeadOffset:], uint64(head))
		le.PutUint64(s[capacity+record.HeadCacheOffset:], uint64(head))

		r, err := OpenRing(ctxT(t), w.File.Path())
		require.NoError(t, err, "the header is intact")
		defer r.Close()
		total := 0
		for range 4 {
			n, err := r.Read(func(_ int32, p []byte) { total += len(p) }, ringbuf.NoLimit)
			require.GreaterOrEqual(t, n, 0)
			if err != nil {
				require.ErrorIs(t, err, ringbuf.ErrCorrupt)
				break
			}
			if _, err := r.Unblock(); err != nil {
				require.ErrorIs(t, err, ringbuf.ErrCorrupt)
			}
		}
		for _, m := range []int{0, 8, 100} {
			if err := r.Write(testTypeID, make([]byte, m)); err != nil {
				require.True(t, errors.Is(err, ringbuf.ErrFull) || errors.Is(err, ringbuf.ErrCorrupt), "%v", err)
			}
		}
		_ = r.Size()
	})
}
