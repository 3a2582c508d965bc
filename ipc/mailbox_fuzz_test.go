package ipc

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/ringbuf"
)

// FuzzMailboxHeader overwrites a mailbox file's header slot, the start of
// the mailbox's shared words (its state word and statistics) and the
// consumer heartbeat with fuzzed bytes (as a faulty or hostile process
// sharing the file could) and opens it as a sender: OpenMailbox returns a
// typed error, or a mailbox whose sends and whose owner's drain still
// return typed outcomes; it never panics or hangs.
func FuzzMailboxHeader(f *testing.F) {
	valid := make([]byte, spareSlotLength)
	binary.LittleEndian.PutUint32(valid[mailboxVersionOffset:], uint32(mailboxLayoutVersion))
	binary.LittleEndian.PutUint64(valid[mailboxMaxMessageSizeOffset:], 32608)
	binary.LittleEndian.PutUint64(valid[mailboxMaxPartsOffset:], 1024)
	binary.LittleEndian.PutUint64(valid[mailboxConsumerTimeoutOffset:], 10000)
	binary.LittleEndian.PutUint64(valid[mailboxUnblockTimeoutOffset:], 5000)
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
