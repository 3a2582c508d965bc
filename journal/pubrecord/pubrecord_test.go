package pubrecord

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/ipc/publication"
	"github.com/dutyrt/duty/journal"
)

var quiet = slog.New(slog.DiscardHandler)

// shmDir returns a fresh directory on /dev/shm where it exists (the file
// system publication files live on), removed after the test.
func shmDir(t testing.TB) string {
	t.Helper()
	base := os.TempDir()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		base = "/dev/shm"
	}
	dir, err := os.MkdirTemp(base, "duty-pubrecord-test-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// pubAndSub creates a publication in dir and opens a subscription to it,
// both closed at the end of the test.
func pubAndSub(t testing.TB, dir, name string, capacity int) (*publication.Publication, *publication.Subscription) {
	t.Helper()
	pub, err := publication.Create(dir, name, capacity)
	require.NoError(t, err)
	t.Cleanup(func() { _ = pub.Close() })
	sub, err := publication.OpenSubscription(ctxT(t), pub.File().Path())
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Close() })
	return pub, sub
}

func openJournal(t testing.TB, dir string) *journal.Journal {
	t.Helper()
	j, err := journal.Open(dir, journal.Options{SegmentSize: journal.MinSegmentSize, Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { _ = j.Close() })
	return j
}

// message i: type 1 + i%3, a body of 8 + i%200 bytes starting with i.
func message(i int) (int32, []byte) {
	b := make([]byte, 8+i%200)
	binary.LittleEndian.PutUint64(b, uint64(i))
	for k := 8; k < len(b); k++ {
		b[k] = byte(i + k)
	}
	return int32(1 + i%3), b
}

func checkMessage(i int, typeID int32, b []byte) error {
	wt, wb := message(i)
	if typeID != wt || string(b) != string(wb) {
		return fmt.Errorf("message %d: type %d, %d bytes; want type %d, %d bytes", i, typeID, len(b), wt, len(wb))
	}
	return nil
}

// A publication's traffic recorded into a journal stream, through
// back-pressure (a 64 KiB log, the recorder behind), until the end of
// stream; then replayed into another publication, through its
// not-connected and back-pressured outcomes: every message exactly once,
// in order, with its type.
func TestRecordAndReplayPublication(t *testing.T) {
	const n = 5000 // ~0.5 MiB of messages: several laps of the 64 KiB logs and several segments
	shm := shmDir(t)
	src, sub := pubAndSub(t, shm, "src", 64<<10)
	j := openJournal(t, t.TempDir())
	rec, err := NewRecorder("rec", j, 3, sub, 64)
	require.NoError(t, err)
	_, _, err = j.Append(9, 1, []byte("another source's record")) // a stream the replay leaves out
	require.NoError(t, err)

	for i := 0; i < n; {
		typeID, b := message(i)
		_, err := src.Offer(typeID, b)
		if errors.Is(err, publication.ErrBackPressured) || errors.Is(err, publication.ErrAdminAction) {
			_, err := rec.DoWork()
			require.NoError(t, err)
			continue
		}
		require.NoError(t, err)
		i++
	}
	require.NoError(t, src.Close())
	for {
		_, err := rec.DoWork()
		if errors.Is(err, agent.ErrDone) {
			break
		}
		require.NoError(t, err)
	}
	require.Equal(t, int64(n), rec.Recorded())
	s, err := j.Stream(3)
	require.NoError(t, err)
	require.Equal(t, int64(n), s.NextSequence())

	dst, err := publication.Create(shm, "dst", 64<<10)
	require.NoError(t, err)
	defer dst.Close()
	tl, err := j.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	rep, err := NewReplayer("rep", tl, dst, 50, 3)
	require.NoError(t, err)
	rep.StopAtEnd = true
	k, err := rep.DoWork()
	require.NoError(t, err)
	require.Zero(t, k, "nobody subscribed yet: not connected, the record stays pending")
	out, err := publication.OpenSubscription(ctxT(t), dst.File().Path())
	require.NoError(t, err)
	defer out.Close()
	got := 0
	var bad error
	poll := func() {
		_, err := out.Poll(func(typeID int32, b []byte) {
			if err := checkMessage(got, typeID, b); err != nil && bad == nil {
				bad = err
			}
			got++
		}, 37)
		require.NoError(t, err)
	}
	for done := false; !done; {
		_, err := rep.DoWork()
		if errors.Is(err, agent.ErrDone) {
			done = true
		} else {
			require.NoError(t, err)
		}
		poll()
	}
	for got < n {
		poll()
	}
	require.NoError(t, bad)
	require.Equal(t, n, got)
	require.Equal(t, int64(n), rep.Sent())
}

// A journal error leaves the message in the publication: a Recorder on a
// closed journal returns the error, and a Recorder on the reopened
// journal records the message.
func TestRecorderJournalErrorLosesNothing(t *testing.T) {
	src, sub := pubAndSub(t, shmDir(t), "src", 64<<10)
	dir := t.TempDir()
	j := openJournal(t, dir)
	rec, err := NewRecorder("rec", j, 1, sub, 0)
	require.NoError(t, err)
	_, err = src.Offer(5, []byte("kept"))
	require.NoError(t, err)
	require.NoError(t, j.Close())
	_, err = rec.DoWork()
	require.ErrorIs(t, err, journal.ErrClosed)

	j = openJournal(t, dir)
	rec, err = NewRecorder("rec", j, 1, sub, 0)
	require.NoError(t, err)
	k, err := rec.DoWork()
	require.NoError(t, err)
	require.Equal(t, 1, k)
	tl, err := j.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	r, ok, err := tl.Next()
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "kept", string(r.Body))
	require.Equal(t, int32(5), r.TypeID)
}

// Paced: a record is offered once as much time has passed since the first
// as between their timestamps.
func TestReplayerPaced(t *testing.T) {
	j := openJournal(t, t.TempDir())
	s, err := j.Stream(1)
	require.NoError(t, err)
	for i, ts := range []int64{1000, 1000 + 500, 1000 + 2000} {
		c, err := s.ClaimAt(1, 1, ts)
		require.NoError(t, err)
		c.Body()[0] = byte(i)
		require.NoError(t, j.Commit())
	}
	dst, out := pubAndSub(t, shmDir(t), "dst", 64<<10)
	tl, err := j.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	rep, err := NewReplayer("rep", tl, dst, 0)
	require.NoError(t, err)
	now := int64(50_000)
	rep.Paced, rep.Clock = true, func() int64 { return now }
	step := func(advance int64, want int) {
		t.Helper()
		now += advance
		k, err := rep.DoWork()
		require.NoError(t, err)
		require.Equal(t, want, k, "at +%d", now-50_000)
	}
	step(0, 1)   // the first goes at once
	step(499, 0) // the second is due 500 ns after
	step(1, 1)
	step(1000, 0) // the third 2000 ns after the first
	step(500, 1)
	var got []byte
	_, err = out.Poll(func(_ int32, b []byte) { got = append(got, b[0]) }, 10)
	require.NoError(t, err)
	require.Equal(t, []byte{0, 1, 2}, got)
}

func TestConstructorsRejectBadArguments(t *testing.T) {
	_, err := NewRecorder("r", nil, 1, nil, 0)
	require.ErrorIs(t, err, ErrArgument)
	_, err = NewReplayer("r", nil, nil, 0)
	require.ErrorIs(t, err, ErrArgument)
	dir := t.TempDir()
	openJournal(t, dir)
	ro, err := journal.Open(dir, journal.Options{ReadOnly: true, Logger: quiet})
	require.NoError(t, err)
	defer ro.Close()
	_, sub := pubAndSub(t, shmDir(t), "src", 64<<10)
	_, err = NewRecorder("r", ro, 1, sub, 0)
	require.ErrorIs(t, err, journal.ErrReadOnly)
}

// Recording and replaying allocate nothing per message.
func TestRecordAndReplayDoNotAllocate(t *testing.T) {
	shm := shmDir(t)
	src, sub := pubAndSub(t, shm, "src", 1<<20)
	dst, out := pubAndSub(t, shm, "dst", 1<<20)
	j, err := journal.Open(t.TempDir(), journal.Options{SegmentSize: 1 << 20, Logger: quiet})
	require.NoError(t, err)
	defer j.Close()
	rec, err := NewRecorder("rec", j, 1, sub, 0)
	require.NoError(t, err)
	tl, err := j.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	rep, err := NewReplayer("rep", tl, dst, 0)
	require.NoError(t, err)
	body := make([]byte, 32)
	drop := func(int32, []byte) {}
	cycle := func() {
		if _, err := src.Offer(1, body); err != nil {
			panic(err)
		}
		if k, err := rec.DoWork(); k != 1 || err != nil {
			panic(fmt.Sprint("record: ", k, err))
		}
		if k, err := rep.DoWork(); k != 1 || err != nil {
			panic(fmt.Sprint("replay: ", k, err))
		}
		if k, err := out.Poll(drop, 1); k != 1 || err != nil {
			panic(fmt.Sprint("poll: ", k, err))
		}
	}
	cycle()
	require.Zero(t, testing.AllocsPerRun(1000, cycle))
}
