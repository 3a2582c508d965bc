package msg

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/message"
)

// TestLayout pins the wire layout (little-endian, the offsets of
// internal/DESIGN.md): a recording or another process reads these bytes.
func TestLayout(t *testing.T) {
	u64 := func(b []byte, off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }
	u32 := func(b []byte, off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }
	enc := func(_ any, size int, encode func([]byte)) []byte {
		b := make([]byte, size)
		encode(b)
		return b
	}

	q := &Quote{Instrument: 7, Seq: 42, FeedNanos: 43, BidPx: 44, BidQty: 45, AskPx: 46, AskQty: 47}
	b := enc(Quotes, 56, func(b []byte) { Quotes.Encode(b, q) })
	require.Equal(t, 56, Quotes.Size(q))
	require.Equal(t, uint32(7), u32(b, 0))
	require.Equal(t, []uint64{42, 43, 44, 45, 46, 47}, []uint64{u64(b, 8), u64(b, 16), u64(b, 24), u64(b, 32), u64(b, 40), u64(b, 48)})

	o := &NewOrder{OrderID: 1, Instrument: 2, Side: Sell, TimeInForce: IOC, Price: 3, Qty: 4, OriginNanos: 5}
	b = enc(NewOrders, 40, func(b []byte) { NewOrders.Encode(b, o) })
	require.Equal(t, 40, NewOrders.Size(o))
	require.Equal(t, uint64(1), u64(b, 0))
	require.Equal(t, uint32(2), u32(b, 8))
	require.Equal(t, []byte{2, 2}, b[12:14])
	require.Equal(t, []uint64{3, 4, 5}, []uint64{u64(b, 16), u64(b, 24), u64(b, 32)})

	c := &CancelOrder{OrderID: 1, Instrument: 2, OriginNanos: 3}
	b = enc(Cancels, 24, func(b []byte) { Cancels.Encode(b, c) })
	require.Equal(t, 24, Cancels.Size(c))
	require.Equal(t, []uint64{1, 3}, []uint64{u64(b, 0), u64(b, 16)})
	require.Equal(t, uint32(2), u32(b, 8))

	r := &ExecutionReport{OrderID: 1, ExecID: 2, Instrument: 3, ExecType: Cancelled, Reason: ReasonIOCRemainder, Side: Sell,
		OrderQty: 10, LastPx: 11, LastQty: 12, LeavesQty: 13, CumQty: 14, OriginNanos: 15}
	b = enc(Reports, 72, func(b []byte) { Reports.Encode(b, r) })
	require.Equal(t, 72, Reports.Size(r))
	require.Equal(t, []uint64{1, 2}, []uint64{u64(b, 0), u64(b, 8)})
	require.Equal(t, uint32(3), u32(b, 16))
	require.Equal(t, []byte{byte(Cancelled), byte(ReasonIOCRemainder), byte(Sell)}, b[20:23])
	require.Equal(t, []uint64{10, 11, 12, 13, 14, 15}, []uint64{u64(b, 24), u64(b, 32), u64(b, 40), u64(b, 48), u64(b, 56), u64(b, 64)})

	j := &RiskReject{OrderID: 1, Instrument: 2, Reason: ReasonOrderRate, Side: Buy, Price: 3, Qty: 4, OriginNanos: 5}
	b = enc(RiskRejects, 40, func(b []byte) { RiskRejects.Encode(b, j) })
	require.Equal(t, 40, RiskRejects.Size(j))
	require.Equal(t, uint64(1), u64(b, 0))
	require.Equal(t, uint32(2), u32(b, 8))
	require.Equal(t, []byte{byte(ReasonOrderRate), byte(Buy)}, b[12:14])
	require.Equal(t, []uint64{3, 4, 5}, []uint64{u64(b, 16), u64(b, 24), u64(b, 32)})
}

// TestThroughMailbox sends a message of every type through a real mailbox
// and routes each to its handler; a short payload is refused, not routed.
func TestThroughMailbox(t *testing.T) {
	mb, err := mailbox.New(mailbox.Config{Name: "msg-test"})
	require.NoError(t, err)
	q := Quote{Instrument: 7, Seq: 42, FeedNanos: 1_000_000_123, BidPx: 9_999, BidQty: 12, AskPx: 10_001, AskQty: 34}
	o := NewOrder{OrderID: 99, Instrument: 3, Side: Sell, TimeInForce: IOC, Price: 10_002, Qty: 25, OriginNanos: -5}
	c := CancelOrder{OrderID: 1 << 40, Instrument: 1<<32 - 1, OriginNanos: 77}
	rep := ExecutionReport{OrderID: 5, ExecID: 6, Instrument: 2, ExecType: PartialFill, Side: Buy,
		OrderQty: 100, LastPx: 10_000, LastQty: 30, LeavesQty: 70, CumQty: 30, OriginNanos: 123_456}
	rj := RiskReject{OrderID: 8, Instrument: 1, Reason: ReasonPriceBand, Side: Buy, Price: 1, Qty: 2, OriginNanos: 3}
	require.NoError(t, Quotes.Send(mb, &q))
	require.NoError(t, NewOrders.Send(mb, &o))
	require.NoError(t, Cancels.Send(mb, &c))
	require.NoError(t, Reports.Send(mb, &rep))
	require.NoError(t, RiskRejects.Send(mb, &rj))
	require.NoError(t, mb.Send(TypeQuote, make([]byte, 3)))

	r := message.NewRouter()
	var got []any
	require.NoError(t, message.Handle(r, Quotes, func(v *Quote) error { got = append(got, *v); return nil }))
	require.NoError(t, message.Handle(r, NewOrders, func(v *NewOrder) error { got = append(got, *v); return nil }))
	require.NoError(t, message.Handle(r, Cancels, func(v *CancelOrder) error { got = append(got, *v); return nil }))
	require.NoError(t, message.Handle(r, Reports, func(v *ExecutionReport) error { got = append(got, *v); return nil }))
	require.NoError(t, message.Handle(r, RiskRejects, func(v *RiskReject) error { got = append(got, *v); return nil }))
	n, err := mb.DrainTo(r, 100)
	require.ErrorIs(t, err, message.ErrPayload)
	require.Equal(t, 6, n)
	require.Equal(t, []any{q, o, c, rep, rj}, got)
}

func TestEnums(t *testing.T) {
	require.True(t, Buy.Valid())
	require.True(t, Sell.Valid())
	require.False(t, Side(0).Valid())
	require.False(t, Side(3).Valid())
	require.Equal(t, Sell, Buy.Opposite())
	require.Equal(t, Buy, Sell.Opposite())
	require.True(t, Limit.Valid())
	require.True(t, IOC.Valid())
	require.False(t, TimeInForce(0).Valid())
	for _, e := range []ExecType{Fill, Cancelled, Rejected} {
		require.True(t, e.Terminal(), e.String())
	}
	for _, e := range []ExecType{New, PartialFill, CancelRejected} {
		require.False(t, e.Terminal(), e.String())
	}
	names := map[string]bool{}
	for r := Reason(0); r.Valid(); r++ {
		require.NotEqual(t, "reason?", r.String())
		require.False(t, names[r.String()], "duplicate reason name %s", r)
		names[r.String()] = true
	}
	require.Len(t, names, NumReasons)
	require.False(t, Reason(NumReasons).Valid())
	require.Equal(t, "exec?", ExecType(0).String())
}

func TestRejectFor(t *testing.T) {
	o := &NewOrder{OrderID: 4, Instrument: 1, Side: Sell, TimeInForce: Limit, Price: 100, Qty: 5, OriginNanos: 9}
	var r RiskReject
	r.RejectFor(o, ReasonMaxOrderQty)
	require.Equal(t, RiskReject{OrderID: 4, Instrument: 1, Reason: ReasonMaxOrderQty, Side: Sell, Price: 100, Qty: 5, OriginNanos: 9}, r)
}
