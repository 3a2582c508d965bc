package replay

import (
	"bytes"
	"encoding/binary"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/internal/journalfile"
	"github.com/dutyrt/duty/journal"
	"github.com/dutyrt/duty/mailbox"
)

func newMailbox(t *testing.T) *mailbox.Mailbox {
	t.Helper()
	mb, err := mailbox.New(mailbox.Config{Capacity: 4096})
	require.NoError(t, err)
	return mb
}

// drainInts drains mb and appends each message's uint64 payload to got,
// checking its type id.
func drainInts(t *testing.T, mb *mailbox.Mailbox, got []uint64) []uint64 {
	t.Helper()
	_, err := mb.Drain(func(m *mailbox.Message) mailbox.Action {
		require.Equal(t, int32(5), m.TypeID())
		got = append(got, binary.LittleEndian.Uint64(m.Payload()))
		return mailbox.Continue
	}, 1<<20)
	require.NoError(t, err)
	return got
}

func sendInt(mb *mailbox.Mailbox, v uint64) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return mb.Send(5, b[:])
}

// A Recorder between two mailboxes records every message once, in order,
// and forwards every message once, in order, through back-pressure from a
// small output mailbox; a Replayer feeds the journal back into a mailbox
// in the same order.
func TestRecordAndReplay(t *testing.T) {
	j := openT(t, testDir(t), journal.Options{})
	in, out := newMailbox(t), newMailbox(t)
	rec, err := NewRecorder("recorder", j, 42, in, out, 0)
	require.NoError(t, err)
	n := soak(3000)
	var forwarded []uint64
	sent := 0
	for round := 0; sent < n || len(forwarded) < n; round++ {
		require.Less(t, round, 100*n, "no progress")
		for sent < n && sendInt(in, uint64(sent)) == nil {
			sent++
		}
		_, err := rec.DoWork()
		require.NoError(t, err)
		if round%3 == 2 { // the output's consumer lags: back-pressure
			forwarded = drainInts(t, out, forwarded)
		}
	}
	for i, v := range forwarded {
		require.Equal(t, uint64(i), v)
	}
	recorded := 0
	tl, err := j.NewTailer()
	require.NoError(t, err)
	for {
		r, ok, err := tl.Next()
		require.NoError(t, err)
		if !ok {
			break
		}
		require.Equal(t, uint32(42), r.StreamID)
		require.Equal(t, int64(recorded), r.Sequence)
		require.Equal(t, uint64(recorded), binary.LittleEndian.Uint64(r.Body), "recorded once, in order")
		recorded++
	}
	require.Equal(t, n, recorded)

	require.NoError(t, tl.SeekStart())
	target := newMailbox(t)
	rp, err := NewReplayer("replayer", tl, target, 100, 42)
	require.NoError(t, err)
	rp.StopAtEnd = true
	var replayed []uint64
	for {
		_, err := rp.DoWork()
		replayed = drainInts(t, target, replayed)
		if err != nil {
			require.ErrorIs(t, err, agent.ErrDone)
			break
		}
	}
	require.Equal(t, forwarded, replayed)
	require.Equal(t, int64(n), rp.Sent())
	require.NoError(t, tl.Close())
}

// Paced replay sends a record only once as much time has passed since the
// first as between their timestamps.
func TestPacedReplay(t *testing.T) {
	stamp := int64(0)
	j := openT(t, testDir(t), journal.Options{Clock: func() int64 { return stamp }})
	for i := range 5 {
		stamp = int64(i) * 1000
		_, _, err := j.Append(1, 5, make([]byte, 8))
		require.NoError(t, err)
	}
	tl, err := j.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	out := newMailbox(t)
	rp, err := NewReplayer("paced", tl, out, 0)
	require.NoError(t, err)
	now := int64(50_000)
	rp.Paced, rp.Clock = true, func() int64 { return now }
	step := func(want int64) {
		t.Helper()
		_, err := rp.DoWork()
		require.NoError(t, err)
		require.Equal(t, want, rp.Sent())
	}
	step(1)
	step(1)
	now += 999
	step(1)
	now++
	step(2)
	now += 2500
	step(4)
	now += 10_000
	step(5)
}

func TestRecorderAndReplayerArguments(t *testing.T) {
	j := openT(t, testDir(t), journal.Options{})
	_, err := NewRecorder("r", j, 1, nil, nil, 0)
	require.ErrorIs(t, err, journal.ErrArgument)
	_, err = NewReplayer("p", nil, newMailbox(t), 0)
	require.ErrorIs(t, err, journal.ErrArgument)
	tl, err := j.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	_, err = NewReplayer("p", tl, newMailbox(t), 0, 1, 2)
	require.ErrorIs(t, err, journal.ErrArgument)
}

// flakySink takes records after refusing each as refusals says: errLater
// (transient), errBroken (not), or nil (taken).
type flakySink struct {
	refusals []error
	got      []uint64
}

var errLater, errBroken = errors.New("later"), errors.New("broken")

func (s *flakySink) Send(typeID int32, body []byte) error {
	if len(s.refusals) > 0 {
		err := s.refusals[0]
		s.refusals = s.refusals[1:]
		if err != nil {
			return err
		}
	}
	s.got = append(s.got, binary.LittleEndian.Uint64(body))
	return nil
}

// A Replayer into a Sink: a transient refusal ends the cycle, another is
// returned naming the record; either way the same record is sent next,
// so nothing is skipped or sent twice.
func TestSinkReplayerRetriesTheSameRecord(t *testing.T) {
	j := openT(t, testDir(t), journal.Options{})
	for i := range 3 {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(i))
		_, _, err := j.Append(1, 5, b[:])
		require.NoError(t, err)
	}
	tl, err := j.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	sink := &flakySink{refusals: []error{nil, errLater, errBroken}}
	rp, err := NewSinkReplayer("sink", tl, sink, func(err error) bool { return errors.Is(err, errLater) }, 0)
	require.NoError(t, err)

	n, err := rp.DoWork() // record 0 taken, record 1 refused for now
	require.NoError(t, err)
	require.Equal(t, 1, n)
	_, err = rp.DoWork() // record 1 refused for good
	require.ErrorIs(t, err, errBroken)
	require.ErrorContains(t, err, "record at")
	n, err = rp.DoWork()
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, []uint64{0, 1, 2}, sink.got)
	require.Equal(t, int64(3), rp.Sent())

	_, err = NewSinkReplayer("sink", tl, sink, nil, 0)
	require.ErrorIs(t, err, journal.ErrArgument)
}

// A multipart message goes through a Recorder into one RecordParts
// record and comes out of a Replayer as the same parts; a one-part message
// stays a plain record.
func TestRecordAndReplayMultipart(t *testing.T) {
	j := openT(t, testDir(t), journal.Options{})
	in := newMailbox(t)
	rec, err := NewRecorder("recorder", j, 7, in, nil, 0)
	require.NoError(t, err)
	messages := [][][]byte{
		{[]byte("header"), []byte("the body"), {}, []byte("trailer")},
		{[]byte("single")},
		{{}, make([]byte, 300)},
	}
	for _, m := range messages {
		require.NoError(t, in.SendParts(9, m...))
	}
	_, err = rec.DoWork()
	require.NoError(t, err)

	tl, err := j.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	var parts [][]byte
	for i, want := range messages {
		r, ok, err := tl.Next()
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, len(want) > 1, r.Flags&journalfile.RecordParts != 0, "message %d", i)
		parts, err = r.Parts(parts)
		require.NoError(t, err)
		require.Equal(t, len(want), len(parts), "message %d", i)
		for k := range want {
			require.True(t, bytes.Equal(want[k], parts[k]), "message %d part %d", i, k)
		}
	}

	require.NoError(t, tl.SeekStart())
	out := newMailbox(t)
	rp, err := NewReplayer("replayer", tl, out, 0)
	require.NoError(t, err)
	rp.StopAtEnd = true
	_, err = rp.DoWork()
	require.ErrorIs(t, err, agent.ErrDone)
	i := 0
	_, err = out.Drain(func(m *mailbox.Message) mailbox.Action {
		require.Equal(t, int32(9), m.TypeID())
		require.Equal(t, len(messages[i]), m.NumParts(), "message %d", i)
		for k, p := range messages[i] {
			require.True(t, bytes.Equal(p, m.Part(k)), "message %d part %d", i, k)
		}
		i++
		return mailbox.Continue
	}, 100)
	require.NoError(t, err)
	require.Equal(t, len(messages), i)
}

// plainSink takes single messages only.
type plainSink struct{ got int }

func (s *plainSink) Send(int32, []byte) error { s.got++; return nil }

// A multipart record for a sink without SendParts is an error naming the
// record, which stays pending: nothing is sent as a concatenation.
func TestReplayerRefusesMultipartForPlainSink(t *testing.T) {
	j := openT(t, testDir(t), journal.Options{})
	_, _, err := j.Append(1, 3, []byte("plain"))
	require.NoError(t, err)
	pos, _, err := j.AppendParts(1, 3, []byte("a"), []byte("b"))
	require.NoError(t, err)
	tl, err := j.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	sink := &plainSink{}
	rp, err := NewSinkReplayer("plain", tl, sink, func(error) bool { return false }, 0)
	require.NoError(t, err)
	for range 2 {
		_, err = rp.DoWork()
		require.ErrorIs(t, err, journal.ErrArgument)
		require.ErrorContains(t, err, "multipart")
		require.Equal(t, 1, sink.got)
		require.Equal(t, pos, tl.Position(), "the multipart record is still pending")
	}
}

// The Recorder takes journal.ErrNotDurable as recorded: the message is forwarded
// and consumed once, the error returned; nothing is recorded twice.
func TestRecorderDoesNotRecordTwiceAfterAFailedSync(t *testing.T) {
	j := openT(t, testDir(t), journal.Options{Flush: journal.FlushEveryCommit})
	in, out := newMailbox(t), newMailbox(t)
	rec, err := NewRecorder("recorder", j, 42, in, out, 0)
	require.NoError(t, err)
	for i := range 5 {
		require.NoError(t, sendInt(in, uint64(i)))
	}
	t.Cleanup(journalfile.FailSyncs(1, syscall.EIO))
	_, err = rec.DoWork()
	require.ErrorIs(t, err, journal.ErrNotDurable)
	for range 3 {
		_, err = rec.DoWork()
		require.NoError(t, err)
	}
	require.Equal(t, []uint64{0, 1, 2, 3, 4}, drainInts(t, out, nil))
	tl, err := j.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	var got []uint64
	for {
		r, ok, err := tl.Next()
		require.NoError(t, err)
		if !ok {
			break
		}
		got = append(got, binary.LittleEndian.Uint64(r.Body))
	}
	require.Equal(t, []uint64{0, 1, 2, 3, 4}, got, "each message recorded once")
}

func testDir(t testing.TB) string {
	t.Helper()
	return t.TempDir()
}

func openT(t testing.TB, dir string, o journal.Options) *journal.Journal {
	t.Helper()
	if o.SegmentSize == 0 {
		o.SegmentSize = journal.MinSegmentSize
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	j, err := journal.Open(dir, o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = j.Close() })
	return j
}

// soak multiplies iteration counts by DUTY_SOAK (default 1).
func soak(n int) int {
	if f, err := strconv.Atoi(os.Getenv("DUTY_SOAK")); err == nil && f > 1 {
		return n * f
	}
	return n
}
