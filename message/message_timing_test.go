package message

import (
	"testing"

	"github.com/dutyrt/duty/mailbox"
)

type benchOrder struct {
	Seq      uint64
	Producer uint64
	_        [16]byte
}

// BenchmarkSendDrain: one typed send and its dispatch through a Router,
// on one goroutine, against BenchmarkSendDrainRaw, the same 32 bytes
// through Send and a Drain handler.
func BenchmarkSendDrain(b *testing.B) {
	mb := newMailbox(b)
	f := MustFixed[benchOrder](1)
	r := NewRouter()
	var sum uint64
	if err := Handle(r, f, func(o *benchOrder) error { sum += o.Seq; return nil }); err != nil {
		b.Fatal(err)
	}
	var o benchOrder
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		o.Seq = uint64(i)
		if err := f.Send(mb, &o); err != nil {
			b.Fatal(err)
		}
		if i&31 == 31 {
			if _, err := mb.DrainTo(r, 64); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkSendDrainRaw(b *testing.B) {
	mb := newMailbox(b)
	var sum uint64
	h := func(m *mailbox.Message) mailbox.Action {
		p := m.Payload()
		sum += uint64(p[0])
		return mailbox.Continue
	}
	var p [32]byte
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p[0] = byte(i)
		if err := mb.Send(1, p[:]); err != nil {
			b.Fatal(err)
		}
		if i&31 == 31 {
			if _, err := mb.Drain(h, 64); err != nil {
				b.Fatal(err)
			}
		}
	}
}
