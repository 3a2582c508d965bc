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

// FuzzMailboxHeader overwrites a mailbox file's header slot and consumer
// heartbeat with fuzzed bytes (as a faulty or hostile process sharing the
// file could) and opens it as a sender: OpenMailbox returns a typed error,
// or a mailbox whose sends and whose owner's drain still work; it never
// panics or hangs.
func FuzzMailboxHeader(f *testing.F) {
	valid := make([]byte, SpareSlotLength)
	binary.LittleEndian.PutUint32(valid[MailboxVersionOffset:], 1)
	binary.LittleEndian.PutUint64(valid[MailboxMaxMessageSizeOffset:], 32608)
	binary.LittleEndian.PutUint64(valid[MailboxMaxPartsOffset:], 1024)
	binary.LittleEndian.PutUint64(valid[MailboxConsumerTimeoutOffset:], 10000)
	binary.LittleEndian.PutUint64(valid[MailboxUnblockTimeoutOffset:], 5000)
	f.Add(valid, int64(0))
	f.Add(valid[:40], int64(-1))
	f.Add([]byte{}, int64(1<<62))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 2}, int64(0))
	f.Fuzz(func(t *testing.T, slot []byte, heartbeatDelta int64) {
		m, err := CreateMailbox(t.TempDir(), "fuzz", MailboxConfig{})
		require.NoError(t, err)
		defer m.Close()
		hdr, err := m.File().SpareSlot(MailboxHeaderSlot)
		require.NoError(t, err)
		copy(hdr, slot)
		m.Ring().SetConsumerHeartbeatTime(time.Now().UnixMilli() + heartbeatDelta)

		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		s, err := OpenMailbox(ctx, m.Path())
		if err != nil {
			for _, want := range []error{ErrCorrupt, ErrVersion, ErrNotReady, ErrConsumerDead, mailbox.ErrClosed} {
				if errors.Is(err, want) {
					return
				}
			}
			t.Fatalf("untyped error: %v", err)
		}
		defer s.Close()
		for i := 0; i < 100; i++ {
			err := s.SendParts(1, []byte("fuzz"), make([]byte, i*97))
			if err != nil && err != mailbox.ErrBackPressured && err != mailbox.ErrClosed && err != mailbox.ErrTooLong &&
				!errors.Is(err, ErrConsumerDead) && !errors.Is(err, mailbox.ErrParts) && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("send: %v", err)
			}
		}
		_, _ = m.Drain(func(*mailbox.Message) mailbox.Action { return mailbox.Continue }, ringbuf.NoLimit)
	})
}
