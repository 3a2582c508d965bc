package message

import (
	"bytes"
	"testing"

	"github.com/dutyrt/duty/mailbox"
)

// FuzzFixedDecode: any payload either decodes into an order that encodes
// back to the same bytes, or is refused; the router consumes it either
// way and never panics.
func FuzzFixedDecode(f *testing.F) {
	codec := MustFixed[order](7)
	good := make([]byte, 32)
	codec.Encode(good, &order{ID: 9, Live: true, Legs: [2]leg{{Firm: true}}})
	f.Add(good)
	f.Add(good[:31])
	f.Add(append(bytes.Clone(good), 0))
	bad := bytes.Clone(good)
	bad[21] = 2 // Live is neither false nor true
	f.Add(bad)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var o order
		if err := codec.Decode(b, &o); err == nil {
			back := make([]byte, codec.Size(&o))
			codec.Encode(back, &o)
			if !bytes.Equal(back, b) {
				t.Fatalf("decoded %x, encodes back as %x", b, back)
			}
		}
		mb, err := mailbox.New(mailbox.Config{Name: "fuzz"})
		if err != nil {
			t.Fatal(err)
		}
		r := NewRouter()
		delivered := 0
		if err := Handle(r, codec, func(*order) error { delivered++; return nil }); err != nil {
			t.Fatal(err)
		}
		if err := mb.Send(7, b); err != nil {
			t.Fatal(err)
		}
		n, derr := mb.DrainTo(r, 1)
		if n != 1 {
			t.Fatalf("consumed %d messages, want 1", n)
		}
		if (derr == nil) != (delivered == 1) {
			t.Fatalf("delivered %d, drain error %v", delivered, derr)
		}
	})
}
