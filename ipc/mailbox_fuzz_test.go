package ipc

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/record"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/ringbuf"
)

// validMailboxHeader is a mailbox header slot as CreateMailbox writes it,
// for a largest message of maxMessage bytes.
func validMailboxHeader(maxMessage uint64) []byte {
	h := make([]byte, spareSlotLength)
	binary.LittleEndian.PutUint32(h[mailboxVersionOffset:], uint32(mailboxLayoutVersion))
	binary.LittleEndian.PutUint64(h[mailboxMaxMessageSizeOffset:], maxMessage)
	binary.LittleEndian.PutUint64(h[mailboxMaxPartsOffset:], 1024)
	binary.LittleEndian.PutUint64(h[mailboxConsumerTimeoutOffset:], 10000)
	binary.LittleEndian.PutUint64(h[mailboxUnblockTimeoutOffset:], 5000)
	return h
}

// FuzzMailboxHeader overwrites a mailbox file's header slot, the start of
// the mailbox's shared words (its state word and statistics) and the
// consumer heartbeat with fuzzed bytes (as a faulty or hostile process
// sharing the file could) and opens it as a sender: OpenMailbox returns a
// typed error, or a mailbox whose sends and whose owner's drain still
// return typed outcomes; it never panics or hangs.
func FuzzMailboxHeader(f *testing.F) {
	valid := validMailboxHeader(32608)
	state := func(v int64) []byte {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint64(b, uint64(v))
		return b
	}
	f.Add(valid, []byte{}, int64(0))
	f.Add(valid, state(1), int64(0))  // closed (drain)
	f.Add(valid, state(2), int64(0))  // closed (discard)
	f.Add(valid, state(3), int64(0))  // no state: corrupt
	f.Add(valid, state(-1), int64(0)) // no state: corrupt
	f.Add(valid, make([]byte, mailbox.WordsLength), int64(0))
	f.Add(valid[:40], []byte{}, int64(-1))
	f.Add([]byte{}, []byte{}, int64(1<<62))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 2}, []byte{}, int64(0))
	f.Fuzz(func(t *testing.T, slot, words []byte, heartbeatDelta int64) {
		m, mf, err := CreateMailbox(t.TempDir(), "fuzz", mailbox.Config{})
		require.NoError(t, err)
		defer mf.Close()
		hdr, err := mf.File.spareSlotAt(mailboxHeaderSlot)
		require.NoError(t, err)
		copy(hdr, slot)
		w, err := mf.File.spareSlotAt(mailboxWordsSlot)
		require.NoError(t, err)
		copy(w, words) // the state word and the consumer's statistics
		mf.ring.SetConsumerHeartbeatTime(time.Now().UnixMilli() + heartbeatDelta)

		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		s, sf, err := OpenMailbox(ctx, mf.File.Path())
		if err != nil {
			for _, want := range []error{ErrCorrupt, ErrVersion, ErrNotReady, mailbox.ErrConsumerDead, mailbox.ErrClosed, mailbox.ErrCorrupt} {
				if errors.Is(err, want) {
					return
				}
			}
			t.Fatalf("untyped error: %v", err)
		}
		defer sf.Close()
		for i := 0; i < 100; i++ {
			err := s.SendParts(1, []byte("fuzz"), make([]byte, i*97))
			if err != nil && err != mailbox.ErrBackPressured && err != mailbox.ErrClosed && err != mailbox.ErrTooLong &&
				!errors.Is(err, mailbox.ErrConsumerDead) && !errors.Is(err, mailbox.ErrArgument) && !errors.Is(err, mailbox.ErrCorrupt) {
				t.Fatalf("send: %v", err)
			}
		}
		_, err = m.Drain(func(*mailbox.Message) mailbox.Action { return mailbox.Continue }, ringbuf.NoLimit)
		if err != nil && !errors.Is(err, mailbox.ErrCorrupt) && !errors.Is(err, mailbox.ErrCorruptFrame) {
			t.Fatalf("drain: %v", err)
		}
	})
}

// FuzzInspectMailbox overwrites a mailbox file's header slot, its shared
// words (the state word first), the ring's head and tail and a stretch of
// its records with fuzzed bytes, as a faulty or hostile process sharing
// the file could, and inspects it from a read-only view: InspectMailbox
// returns a typed error, or an account whose stranded messages fit in the
// ring (a record takes at least 8 bytes); it never panics or hangs.
func FuzzInspectMailbox(f *testing.F) {
	valid := validMailboxHeader(4064)
	dead := make([]byte, 8)
	binary.LittleEndian.PutUint64(dead, 4) // consumer dead
	f.Add(valid, dead, int64(0), int64(64), []byte{})
	f.Add(valid, dead, int64(8), int64(4096), []byte{1, 2, 3})
	f.Add(valid, dead, int64(-8), int64(1<<40), []byte{0xff, 0xff, 0xff, 0x7f})
	f.Add(valid, []byte{1}, int64(0), int64(0), []byte{})
	f.Add([]byte{}, []byte{}, int64(0), int64(0), []byte{})
	f.Fuzz(func(t *testing.T, slot, words []byte, head, tail int64, records []byte) {
		m, mf, err := CreateMailbox(t.TempDir(), "fuzz", mailbox.Config{Capacity: 4096})
		require.NoError(t, err)
		defer mf.Close()
		for i := range 10 {
			require.NoError(t, m.Send(1, make([]byte, 8*i)))
		}
		hdr, err := mf.File.spareSlotAt(mailboxHeaderSlot)
		require.NoError(t, err)
		copy(hdr, slot)
		w, err := mf.File.spareSlotAt(mailboxWordsSlot)
		require.NoError(t, err)
		copy(w, words)
		ring, err := mf.File.Section(0)
		require.NoError(t, err)
		capacity := len(ring) - ringbuf.TrailerLength
		binary.LittleEndian.PutUint64(ring[capacity+record.HeadOffset:], uint64(head))
		binary.LittleEndian.PutUint64(ring[capacity+record.TailOffset:], uint64(tail))
		copy(ring[64:capacity], records)

		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		ro, err := OpenReadOnly(ctx, mf.File.Path())
		require.NoError(t, err)
		defer ro.Close()
		info, err := InspectMailbox(ro)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		require.GreaterOrEqual(t, info.Stranded, int64(0))
		require.LessOrEqual(t, info.Stranded, int64(capacity/8))
		if !info.ConsumerDead {
			require.Zero(t, info.Stranded, "stranded only behind a dead consumer")
		}
	})
}
