package message

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/mailbox"
	"github.com/stretchr/testify/require"
)

// name is a Codec of its own: a length-prefixed string.
type name struct{ s string }

type nameCodec struct{ id int32 }

var errNameLength = errors.New("bad name length")

func (c nameCodec) TypeID() int32  { return c.id }
func (nameCodec) Size(v *name) int { return 2 + len(v.s) }
func (nameCodec) Encode(b []byte, v *name) {
	binary.LittleEndian.PutUint16(b, uint16(len(v.s)))
	copy(b[2:], v.s)
}
func (nameCodec) Decode(b []byte, v *name) error {
	if len(b) < 2 || int(binary.LittleEndian.Uint16(b)) != len(b)-2 {
		return errNameLength
	}
	v.s = string(b[2:])
	return nil
}

func TestRouterRoutes(t *testing.T) {
	mb := newMailbox(t)
	r := NewRouter()
	orders := MustFixed[order](7)
	big := MustFixed[leg](100_000) // past the dense table
	var got []string
	require.NoError(t, Handle(r, orders, func(o *order) error { got = append(got, fmt.Sprint("order ", o.ID)); return nil }))
	require.NoError(t, Handle(r, big, func(l *leg) error { got = append(got, fmt.Sprint("leg ", l.Venue)); return nil }))
	require.NoError(t, Handle(r, nameCodec{id: 3}, func(n *name) error { got = append(got, "name "+n.s); return nil }))
	require.ErrorIs(t, Handle(r, MustFixed[leg](7), func(*leg) error { return nil }), ErrTypeID)
	require.ErrorIs(t, Handle(r, MustFixed[leg](100_000), func(*leg) error { return nil }), ErrTypeID)
	require.ErrorIs(t, Handle(r, nameCodec{id: 0}, func(*name) error { return nil }), ErrTypeID)

	require.NoError(t, orders.Send(mb, &order{ID: 1}))
	require.NoError(t, big.Send(mb, &leg{Venue: 2}))
	require.NoError(t, Send(mb, nameCodec{id: 3}, &name{s: "three"}))
	require.NoError(t, mb.Send(4, []byte("nobody's")))
	require.NoError(t, mb.Send(3, []byte{9, 0, 'x'})) // a name that does not decode
	n, err := mb.DrainTo(r, 10)
	require.Equal(t, 5, n, "every message is consumed, routed or not")
	require.ErrorIs(t, err, ErrNoRoute) // the first failure; the name that did not decode is counted
	require.ErrorContains(t, err, "handler failed on 2 messages")
	require.Equal(t, []string{"order 1", "leg 2", "name three"}, got)
	require.Equal(t, RouterStats{Delivered: 3, Undecodable: 1, NoRoute: 1}, r.Stats())

	// A fallback takes what has no route.
	var other []int32
	r.Fallback(func(m *mailbox.Message) error { other = append(other, m.TypeID()); return nil })
	require.NoError(t, mb.Send(4, nil))
	n, err = mb.DrainTo(r, 10)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, []int32{4}, other)

	require.ErrorIs(t, Send(mb, nameCodec{id: -1}, &name{}), ErrTypeID)

	require.NoError(t, mb.Send(3, []byte{1}))
	_, err = mb.DrainTo(r, 10)
	require.ErrorIs(t, err, errNameLength)
}

var errRejected = errors.New("rejected")

// A handler's error reaches the runner through the actor, and the actor
// goes on.
func TestRouterInAnActor(t *testing.T) {
	mb := newMailbox(t)
	r := NewRouter()
	orders := MustFixed[order](7)
	var qty int32
	require.NoError(t, Handle(r, orders, func(o *order) error {
		if o.Qty < 0 {
			return errRejected
		}
		qty += o.Qty
		return nil
	}))
	a, err := mailbox.NewReceiverActor("engine", mb, r)
	require.NoError(t, err)
	inv, err := agent.NewInvoker(a)
	require.NoError(t, err)
	require.NoError(t, inv.Start())
	for _, q := range []int32{5, -1, 7} {
		require.NoError(t, orders.Send(mb, &order{Qty: q}))
	}
	n, err := a.DoWork()
	require.Equal(t, 3, n)
	require.ErrorIs(t, err, errRejected)
	require.Equal(t, int32(12), qty)
	require.Equal(t, RouterStats{Delivered: 3, Failed: 1}, r.Stats())
}
