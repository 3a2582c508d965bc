package ipc

import (
	"testing"

	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/ringbuf"
)

// BenchmarkMailboxSendDrain: one goroutine sends bursts of 32-byte
// messages and drains them: the software cost per message (send side plus
// drain side) of the cross-process mailbox, against the same mailbox over a
// ring on the heap (the baseline, mailbox.New) and against the raw
// mailbox.Mailbox over the same file (without this package's dead-consumer
// check and heartbeat). No cache line moves between cores.
func BenchmarkMailboxSendDrain(b *testing.B) {
	const burst = 1000 // 40 KB of records: fits the 64 KiB ring
	type api struct {
		send  func(int32, []byte) error
		drain func(mailbox.Handler, int) (int, error)
	}
	run := func(b *testing.B, a api) {
		var p [32]byte
		var got int
		h := func(m *mailbox.Message) mailbox.Action { got += len(m.Payload()); return mailbox.Continue }
		b.ReportAllocs()
		for i := 0; i < b.N; i += burst {
			for range burst {
				if err := a.send(1, p[:]); err != nil {
					b.Fatal(err)
				}
			}
			for n := 0; n < burst; {
				k, err := a.drain(h, ringbuf.NoLimit)
				if err != nil {
					b.Fatal(err)
				}
				n += k
			}
		}
	}
	b.Run("heap", func(b *testing.B) {
		mb, err := mailbox.New(mailbox.Config{})
		if err != nil {
			b.Fatal(err)
		}
		run(b, api{mb.Send, mb.Drain})
	})
	b.Run("file-raw", func(b *testing.B) {
		m := mbNewForTest(b, MailboxConfig{})
		s := mbOpenForTest(b, m.Path())
		run(b, api{s.Mailbox().Send, m.Mailbox().Drain})
	})
	b.Run("file", func(b *testing.B) {
		m := mbNewForTest(b, MailboxConfig{})
		s := mbOpenForTest(b, m.Path())
		run(b, api{s.Send, m.Drain})
	})
}
