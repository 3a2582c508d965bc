package message

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/dutyrt/duty/internal/buildtags"
	"github.com/dutyrt/duty/mailbox"
	"github.com/stretchr/testify/require"
)

type order struct {
	ID    uint64
	Price float64
	Qty   int32
	Side  uint8
	Live  bool
	_     [2]byte
	Legs  [2]leg
}

type leg struct {
	Venue uint16
	Firm  bool
	_     [1]byte
}

func newMailbox(t testing.TB) *mailbox.Mailbox {
	t.Helper()
	mb, err := mailbox.New(mailbox.Config{Name: t.Name()})
	require.NoError(t, err)
	return mb
}

func TestFixedLayoutChecks(t *testing.T) {
	f, err := NewFixed[order](7)
	require.NoError(t, err)
	require.Equal(t, int32(7), f.TypeID())
	require.Equal(t, 32, f.Size(nil))
	require.Equal(t, []uintptr{21, 26, 30}, f.bools)

	for name, err := range map[string]error{
		"padding": second(NewFixed[struct {
			A int32
			B int64
		}](1)),
		"trailing": second(NewFixed[struct {
			A int64
			B int32
		}](1)),
		"int":     second(NewFixed[struct{ A int }](1)),
		"uintptr": second(NewFixed[struct{ A [2]uintptr }](1)),
		"pointer": second(NewFixed[struct{ A *int64 }](1)),
		"string":  second(NewFixed[struct{ A string }](1)),
		"slice":   second(NewFixed[[]byte](1)),
		"nested padding": second(NewFixed[struct {
			A [2]struct {
				X int64
				Y int8
			}
		}](1)),
		"interface field": second(NewFixed[struct{ A any }](1)),
	} {
		require.ErrorIs(t, err, ErrLayout, name)
	}
	_, err = NewFixed[order](0)
	require.ErrorIs(t, err, ErrTypeID)
	_, err = NewFixed[order](mailbox.MaxTypeID + 1)
	require.ErrorIs(t, err, ErrTypeID)
	_, err = NewFixed[struct{}](1)
	require.NoError(t, err)
	require.Panics(t, func() { MustFixed[struct{ A int }](1) })
}

func second[A, B any](_ A, b B) B { return b }

// The bytes of a Fixed type are its fields in order, little-endian: what
// another language's decoder reads.
func TestFixedWireLayout(t *testing.T) {
	f := MustFixed[order](7)
	o := order{ID: 0x0102030405060708, Price: 1.5, Qty: -3, Side: 2, Live: true, Legs: [2]leg{{Venue: 9}, {Venue: 0x1234, Firm: true}}}
	b := make([]byte, f.Size(&o))
	f.Encode(b, &o)
	require.Equal(t, uint64(0x0102030405060708), binary.LittleEndian.Uint64(b[0:]))
	require.Equal(t, math.Float64bits(1.5), binary.LittleEndian.Uint64(b[8:]))
	require.Equal(t, uint32(0xfffffffd), binary.LittleEndian.Uint32(b[16:]))
	require.Equal(t, []byte{2, 1}, b[20:22])
	require.Equal(t, uint16(9), binary.LittleEndian.Uint16(b[24:]))
	require.Equal(t, uint16(0x1234), binary.LittleEndian.Uint16(b[28:]))
	require.Equal(t, byte(1), b[30])

	var back order
	require.NoError(t, f.Decode(b, &back))
	require.Equal(t, o, back)
}

func TestFixedDecodeRejectsBadPayloads(t *testing.T) {
	f := MustFixed[order](7)
	var o order
	o.Qty = 42
	require.ErrorIs(t, f.Decode(make([]byte, 31), &o), ErrPayload)
	require.ErrorIs(t, f.Decode(make([]byte, 33), &o), ErrPayload)
	b := make([]byte, 32)
	for _, off := range []int{21, 26, 30} {
		b[off] = 2
		err := f.Decode(b, &o)
		require.ErrorIs(t, err, ErrPayload)
		b[off] = 1
	}
	require.Equal(t, int32(42), o.Qty, "a payload that fails leaves the value alone")
	require.NoError(t, f.Decode(b, &o))
	require.True(t, o.Live && o.Legs[0].Firm && o.Legs[1].Firm)
}

func TestFixedSendAndDrain(t *testing.T) {
	mb := newMailbox(t)
	f := MustFixed[order](7)
	for i := range 5 {
		require.NoError(t, f.Send(mb, &order{ID: uint64(i), Qty: int32(i * 10)}))
	}
	var got []order
	r := NewRouter()
	require.NoError(t, Handle(r, f, func(o *order) error { got = append(got, *o); return nil }))
	n, err := mb.DrainTo(r, 10)
	require.NoError(t, err)
	require.Equal(t, 5, n)
	for i, o := range got {
		require.Equal(t, uint64(i), o.ID)
		require.Equal(t, int32(i*10), o.Qty)
	}
	require.Equal(t, RouterStats{Delivered: 5}, r.Stats())
}

func TestSendAndDispatchDoNotAllocate(t *testing.T) {
	if buildtags.Race {
		t.Skip("the race detector allocates")
	}
	mb := newMailbox(t)
	f := MustFixed[order](7)
	r := NewRouter()
	var sum int64
	require.NoError(t, Handle(r, f, func(o *order) error { sum += int64(o.Qty); return nil }))
	allocs := testing.AllocsPerRun(1000, func() {
		o := order{ID: 1, Qty: 2} // on the stack: Send must not make it escape
		if err := f.Send(mb, &o); err != nil {
			t.Fatal(err)
		}
		if n, err := mb.DrainTo(r, 10); n != 1 || err != nil {
			t.Fatal(n, err)
		}
	})
	require.Zero(t, allocs)
	require.Equal(t, int64(2*1001), sum)

	// Through the Codec interface, with a value that lives elsewhere.
	var c Codec[order] = f
	o := &order{Qty: 3}
	allocs = testing.AllocsPerRun(1000, func() {
		if err := Send(mb, c, o); err != nil {
			t.Fatal(err)
		}
		if n, err := mb.DrainTo(r, 10); n != 1 || err != nil {
			t.Fatal(n, err)
		}
	})
	require.Zero(t, allocs)
}

// A Fixed type's messages keep their layout through a checksummed
// mailbox and through one whose message is fragmented or multipart.
func TestFixedThroughEveryKindOfMailbox(t *testing.T) {
	for _, checksum := range []bool{false, true} {
		mb, err := mailbox.New(mailbox.Config{Name: "m", Checksum: checksum})
		require.NoError(t, err)
		f := MustFixed[order](7)
		r := NewRouter()
		var got []uint64
		require.NoError(t, Handle(r, f, func(o *order) error { got = append(got, o.ID); return nil }))
		require.NoError(t, f.Send(mb, &order{ID: 1}))
		// The same bytes sent as a framed one-part message: the payload
		// sits after a frame header, possibly unaligned for order.
		b := make([]byte, f.Size(nil))
		f.Encode(b, &order{ID: 2})
		require.NoError(t, mb.SendParts(7, b))
		// Two parts are not an order.
		require.NoError(t, mb.SendParts(7, b[:16], b[16:]))
		n, err := mb.DrainTo(r, 10)
		require.Equal(t, 3, n)
		require.ErrorIs(t, err, ErrPayload)
		require.Equal(t, []uint64{1, 2}, got)
		require.Equal(t, RouterStats{Delivered: 2, Undecodable: 1}, r.Stats())
	}
}

func TestFixedViewFallsBackToACopyWhenUnaligned(t *testing.T) {
	f := MustFixed[order](7)
	buf := make([]byte, 40)
	require.NotNil(t, f.view(buf[:32]))
	require.Nil(t, f.view(buf[1:33]))
	require.NotNil(t, MustFixed[[3]byte](1).view(buf[1:4]), "alignment 1 is always met")
}
