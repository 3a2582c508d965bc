package ipc

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/ringbuf"
)

// validImage returns the bytes of a valid KindRing file with a ring of
// capacity 1024, as Create writes them.
func validImage(t testing.TB) []byte {
	t.Helper()
	h, err := layout(KindRing, []int{1024 + ringbuf.TrailerLength})
	require.NoError(t, err)
	h.LivenessTimeout = 10_000
	h.OwnerPID = int64(os.Getpid())
	h.OwnerStartTime = int64(selfStartTime())
	h.Created = time.Now().UnixMilli()
	words := make([]uint64, h.FileLength/8) // 8-aligned for the atomic stores
	b := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), h.FileLength)
	writeHeader(b, h)
	return b
}

func writeImage(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}

func shortCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	t.Cleanup(cancel)
	return ctx
}

// TestOpenBadFiles: each bad file gives its typed error, without panic,
// fault or hang. Files that can never become valid fail at once (a long
// context); files that may still be being created fail when a short
// context ends.
func TestOpenBadFiles(t *testing.T) {
	dir := testDir(t)
	le := binary.LittleEndian
	put32 := func(off int, v int32) func([]byte) []byte {
		return func(b []byte) []byte { le.PutUint32(b[off:], uint32(v)); return b }
	}
	put64 := func(off int, v int64) func([]byte) []byte {
		return func(b []byte) []byte { le.PutUint64(b[off:], uint64(v)); return b }
	}
	for _, c := range []struct {
		name   string
		mutate func([]byte) []byte
		want   error
		wait   bool // needs the short context
	}{
		{"valid", func(b []byte) []byte { return b }, nil, false},
		{"wrong magic", func(b []byte) []byte { copy(b, "NOTDUTY!"); return b }, ErrNotDutyFile, false},
		{"magic with version 0 elsewhere", func(b []byte) []byte { copy(b, "ELF\x00\x00\x00\x00\x00"); return put32(versionOffset, 0)(b) }, ErrNotDutyFile, false},
		{"zero magic, nonzero version", func(b []byte) []byte { copy(b, make([]byte, 8)); return b }, ErrNotDutyFile, false},
		{"newer version", put32(versionOffset, fileLayoutVersion+1), ErrVersion, false},
		{"negative version", put32(versionOffset, -1), ErrVersion, false},
		{"version 0", put32(versionOffset, 0), ErrNotReady, true},
		{"all zero header", func(b []byte) []byte { clear(b[:headerLength]); return b }, ErrNotReady, true},
		{"zero magic and version, fields set", func(b []byte) []byte { clear(b[:12]); return b }, ErrNotDutyFile, false},
		{"zero length", func(b []byte) []byte { return nil }, ErrNotReady, true},
		{"shorter than a header", func(b []byte) []byte { return b[:100] }, ErrNotReady, true},
		{"shorter than a header, zeros", func(b []byte) []byte { return make([]byte, 100) }, ErrNotReady, true},
		{"short foreign file", func(b []byte) []byte { return []byte(`{"Instruments": 8}` + "\n") }, ErrNotDutyFile, false},
		{"short foreign file, 3 bytes", func(b []byte) []byte { return []byte("DUX") }, ErrNotDutyFile, false},
		{"header only", func(b []byte) []byte { return b[:headerLength] }, ErrTruncated, false},
		{"one page short", func(b []byte) []byte { return b[:len(b)-4096] }, ErrTruncated, false},
		{"huge declared length", put64(fileLengthOffset, 1<<39), ErrTruncated, false},
		{"declared length beyond max", put64(fileLengthOffset, 1<<50), ErrCorrupt, false},
		{"negative declared length", put64(fileLengthOffset, -4096), ErrCorrupt, false},
		{"unaligned declared length", put64(fileLengthOffset, 8193), ErrCorrupt, false},
		{"kind 0", put32(kindOffset, 0), ErrCorrupt, false},
		{"header length", put32(headerLengthOffset, 128), ErrCorrupt, false},
		{"alignment", put32(sectionAlignmentOffset, 64), ErrCorrupt, false},
		{"no sections", put32(sectionCountOffset, 0), ErrCorrupt, false},
		{"too many sections", put32(sectionCountOffset, 9), ErrCorrupt, false},
		{"section inside header", put64(sectionEntry(0)+sectionOffsetField, 0), ErrCorrupt, false},
		{"section unaligned", put64(sectionEntry(0)+sectionOffsetField, 4100), ErrCorrupt, false},
		{"section past end", put64(sectionEntry(0)+sectionLengthField, 1<<20), ErrCorrupt, false},
		{"section length overflow", put64(sectionEntry(0)+sectionLengthField, 1<<62), ErrCorrupt, false},
		{"section length negative", put64(sectionEntry(0)+sectionLengthField, -1), ErrCorrupt, false},
		{"section offset overflow", put64(sectionEntry(0)+sectionOffsetField, 1<<62), ErrCorrupt, false},
		{"second section overlaps", func(b []byte) []byte {
			put32(sectionCountOffset, 2)(b)
			put64(sectionEntry(1)+sectionOffsetField, 4096)(b)
			return put64(sectionEntry(1)+sectionLengthField, 8)(b)
		}, ErrCorrupt, false},
		{"liveness timeout 0", put64(livenessTimeoutOffset, 0), ErrCorrupt, false},
		{"ring section not a ring", put64(sectionEntry(0)+sectionLengthField, 1000), ErrCorrupt, false},
		{"another kind", put32(kindOffset, int32(KindCounters)), ErrKind, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := writeImage(t, dir, "f", c.mutate(validImage(t)))
			ctx := ctxT(t)
			if c.wait {
				ctx = shortCtx(t)
			}
			r, err := OpenRing(ctx, path)
			if c.want == nil {
				require.NoError(t, err)
				require.NoError(t, r.Close())
				return
			}
			require.ErrorIs(t, err, c.want)
			require.Nil(t, r)
			if c.wait {
				require.ErrorIs(t, err, context.DeadlineExceeded)
			} else {
				require.False(t, errors.Is(err, ErrNotReady), "did not wait: %v", err)
			}
			if errors.Is(err, ErrVersion) {
				var ve *versionError
				require.ErrorAs(t, err, &ve)
				require.Equal(t, fileLayoutVersion, ve.Supported)
				require.NotEqual(t, fileLayoutVersion, ve.Found)
			}
			require.Zero(t, openFDs(t, path), "no descriptor or mapping left behind")
		})
	}
}

func TestOpenNotRegular(t *testing.T) {
	dir := testDir(t)
	_, err := open(ctxT(t), dir)
	require.ErrorIs(t, err, ErrNotDutyFile)
	require.False(t, errors.Is(err, ErrNotReady))
	require.NoError(t, unix.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
	_, err = open(ctxT(t), filepath.Join(dir, "fifo"))
	require.ErrorIs(t, err, ErrNotDutyFile)
}

// TestOpenWaitsWhileCreated plays a creator that makes the file visible
// empty, then sizes it, then writes the magic, the header, and the version
// last;
// Open, started before, returns the file once it is ready.
func TestOpenWaitsWhileCreated(t *testing.T) {
	dir := testDir(t)
	path := filepath.Join(dir, "slow")
	img := validImage(t)
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
	require.NoError(t, err)
	defer unix.Close(fd)

	type result struct {
		r   *Ring
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := OpenRing(ctxT(t), path)
		done <- result{r, err}
	}()
	step := func() {
		time.Sleep(5 * time.Millisecond) // give Open a chance to poll (not an assertion)
		select {
		case r := <-done:
			t.Fatalf("Open returned before the file was ready: %v", r.err)
		default:
		}
	}
	step() // empty file
	require.NoError(t, unix.Ftruncate(fd, int64(len(img))))
	step() // sized, all zero
	m, err := unix.Mmap(fd, 0, len(img), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	require.NoError(t, err)
	defer unix.Munmap(m)
	(*atomic.Uint64)(unsafe.Pointer(&m[magicOffset])).Store(magicWord)
	step()                                                       // magic, nothing else
	copy(m[versionOffset+4:], img[versionOffset+4:headerLength]) // everything but magic and version
	step()                                                       // version 0
	(*atomic.Int32)(unsafe.Pointer(&m[versionOffset])).Store(fileLayoutVersion)
	r := <-done
	require.NoError(t, r.err)
	require.NoError(t, r.r.Write(testTypeID, []byte("ready")))
	require.NoError(t, r.r.Close())
}

func TestOpenLiveOwner(t *testing.T) {
	dir := testDir(t)
	f, err := create(dir, "live", kindUserMin, []int{8})
	require.NoError(t, err)
	defer f.Close()
	g, err := open(ctxT(t), f.Path(), withLiveOwner())
	require.NoError(t, err)
	require.NoError(t, g.Close())
	future := func() time.Time { return time.Now().Add(time.Minute) }
	_, err = open(ctxT(t), f.Path(), withLiveOwner(), WithClock(clock.Func(future)))
	require.ErrorIs(t, err, ErrOwnerDead, "stale heartbeat")
	require.Equal(t, 2, openFDs(t, f.Path()), "only the owner's descriptor and mapping are left")
}

func TestOpenArguments(t *testing.T) {
	_, err := open(ctxT(t), "/nonexistent", withPollInterval(0))
	require.ErrorIs(t, err, ErrArgument)
}
