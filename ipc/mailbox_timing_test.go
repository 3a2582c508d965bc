package ipc

import (
	"testing"

	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/ringbuf"
)

// BenchmarkMailboxSendDrain: one goroutine sends bursts of 32-byte
// messages and drains them: the software cost per message (send side plus
// drain side) of the mailbox in a shared file (a sender's view sending,
// the owner's draining, with the file's heartbeats), against the same
// mailbox on the heap (the baseline, mailbox.New). No cache line moves
// between cores.
func BenchmarkMailboxSendDrain(b *testing.B) {
	const burst = 1000 // 40 KB of records: fits the 64 KiB ring
	run := func(b *testing.B, send, drain *mailbox.Mailbox) {
		var p [32]byte
		var got int
		h := func(m *mailbox.Message) mailbox.Action { got += len(m.Payload()); return mailbox.Continue }
		b.ReportAllocs()
		for i := 0; i < b.N; i += burst {
			for range burst {
				if err := send.Send(1, p[:]); err != nil {
					b.Fatal(err)
				}
			}
			for n := 0; n < burst; {
				k, err := drain.Drain(h, ringbuf.NoLimit)
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
		run(b, mb, mb)
	})
	b.Run("file", func(b *testing.B) {
		m, mf := mbNewForTest(b, mailbox.Config{})
		s, _ := mbOpenForTest(b, mf.File.Path())
		run(b, s, m)
	})
}

// BenchmarkConsumerProbe: what a sender pays to ask whether a live
// consumer's process is gone: the probe alone (File.ownerExited: a
// shared flock that fails while the owner holds its lock), and
// CheckConsumer with that probe (the consumer's position has not moved:
// the heartbeat, a clock read and the probe), as a send crossing an
// eighth of the ring calls it.
func BenchmarkConsumerProbe(b *testing.B) {
	_, mf := mbNewForTest(b, mailbox.Config{})
	_, sf := mbOpenForTest(b, mf.File.Path())
	b.Run("ownerExited", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if sf.File.ownerExited() {
				b.Fatal("a live owner")
			}
		}
	})
	b.Run("CheckConsumer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := sf.CheckConsumer(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
