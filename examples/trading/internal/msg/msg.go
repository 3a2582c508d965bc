package msg

import (
	"encoding/binary"
	"fmt"

	"github.com/dutyrt/duty/mailbox"
)

// ErrShort is wrapped by Decode for a payload shorter than the message's
// fixed layout. It also matches mailbox.ErrTooShort under errors.Is, as
// the mailbox's Decoder contract asks.
var ErrShort error = shortError{}

type shortError struct{}

func (shortError) Error() string { return "msg: encoded message too short" }

func (shortError) Is(target error) bool { return target == mailbox.ErrTooShort }

// MaxClientOrderID is the largest order id a client (the strategy) may
// use. Ids above it belong to the exchange's other participants (the
// resting liquidity it places from quotes), so the two never collide.
// Order id 0 is invalid.
const MaxClientOrderID uint64 = 1<<62 - 1

var le = binary.LittleEndian

func errShort(what string, want, got int) error {
	return fmt.Errorf("%w: %s needs %d bytes, got %d", ErrShort, what, want, got)
}

// Quote is a top-of-book market-data update for one instrument.
type Quote struct {
	Instrument uint32
	Seq        uint64 // feed sequence number, from 1, one sequence for all instruments
	FeedNanos  int64  // when the feed generated it
	BidPx      int64
	BidQty     int64
	AskPx      int64
	AskQty     int64
}

// TypeID returns TypeQuote.
func (*Quote) TypeID() int32 { return TypeQuote }

// EncodedLen returns QuoteLen.
func (*Quote) EncodedLen() int { return QuoteLen }

// Mid returns the mid price in ticks, rounded down, for a quote with
// 0 < BidPx < AskPx (computed so that it cannot overflow: (BidPx+AskPx)/2
// wrapped negative for prices near MaxInt64).
func (q *Quote) Mid() int64 { return q.BidPx + (q.AskPx-q.BidPx)/2 }

// Encode writes q into b[:QuoteLen].
func (q *Quote) Encode(b []byte) {
	_ = b[QuoteLen-1]
	le.PutUint32(b[quoteInstrument:], q.Instrument)
	le.PutUint32(b[quotePad:], 0)
	le.PutUint64(b[quoteSeq:], q.Seq)
	le.PutUint64(b[quoteFeedNanos:], uint64(q.FeedNanos))
	le.PutUint64(b[quoteBidPx:], uint64(q.BidPx))
	le.PutUint64(b[quoteBidQty:], uint64(q.BidQty))
	le.PutUint64(b[quoteAskPx:], uint64(q.AskPx))
	le.PutUint64(b[quoteAskQty:], uint64(q.AskQty))
}

// Decode reads q from b; see the package comment.
func (q *Quote) Decode(b []byte) error {
	if len(b) < QuoteLen {
		return errShort("quote", QuoteLen, len(b))
	}
	q.Instrument = le.Uint32(b[quoteInstrument:])
	q.Seq = le.Uint64(b[quoteSeq:])
	q.FeedNanos = int64(le.Uint64(b[quoteFeedNanos:]))
	q.BidPx = int64(le.Uint64(b[quoteBidPx:]))
	q.BidQty = int64(le.Uint64(b[quoteBidQty:]))
	q.AskPx = int64(le.Uint64(b[quoteAskPx:]))
	q.AskQty = int64(le.Uint64(b[quoteAskQty:]))
	return nil
}

// NewOrder asks the exchange to buy or sell.
type NewOrder struct {
	OrderID     uint64 // unique per client, 1..MaxClientOrderID
	Instrument  uint32
	Side        Side
	TimeInForce TimeInForce
	Price       int64 // limit price in ticks
	Qty         int64
	OriginNanos int64 // FeedNanos of the quote that triggered the order
}

// TypeID returns TypeNewOrder.
func (*NewOrder) TypeID() int32 { return TypeNewOrder }

// EncodedLen returns NewOrderLen.
func (*NewOrder) EncodedLen() int { return NewOrderLen }

// Encode writes o into b[:NewOrderLen].
func (o *NewOrder) Encode(b []byte) {
	_ = b[NewOrderLen-1]
	le.PutUint64(b[newOrderID:], o.OrderID)
	le.PutUint32(b[newOrderInstrument:], o.Instrument)
	b[newOrderSide] = byte(o.Side)
	b[newOrderTIF] = byte(o.TimeInForce)
	le.PutUint16(b[newOrderPad:], 0)
	le.PutUint64(b[newOrderPrice:], uint64(o.Price))
	le.PutUint64(b[newOrderQty:], uint64(o.Qty))
	le.PutUint64(b[newOrderOriginNanos:], uint64(o.OriginNanos))
}

// Decode reads o from b; see the package comment.
func (o *NewOrder) Decode(b []byte) error {
	if len(b) < NewOrderLen {
		return errShort("new order", NewOrderLen, len(b))
	}
	o.OrderID = le.Uint64(b[newOrderID:])
	o.Instrument = le.Uint32(b[newOrderInstrument:])
	o.Side = Side(b[newOrderSide])
	o.TimeInForce = TimeInForce(b[newOrderTIF])
	o.Price = int64(le.Uint64(b[newOrderPrice:]))
	o.Qty = int64(le.Uint64(b[newOrderQty:]))
	o.OriginNanos = int64(le.Uint64(b[newOrderOriginNanos:]))
	return nil
}

// CancelOrder asks the exchange to cancel a live order.
type CancelOrder struct {
	OrderID     uint64
	Instrument  uint32
	OriginNanos int64 // FeedNanos of the quote that triggered the cancel
}

// TypeID returns TypeCancelOrder.
func (*CancelOrder) TypeID() int32 { return TypeCancelOrder }

// EncodedLen returns CancelOrderLen.
func (*CancelOrder) EncodedLen() int { return CancelOrderLen }

// Encode writes c into b[:CancelOrderLen].
func (c *CancelOrder) Encode(b []byte) {
	_ = b[CancelOrderLen-1]
	le.PutUint64(b[cancelID:], c.OrderID)
	le.PutUint32(b[cancelInstrument:], c.Instrument)
	le.PutUint32(b[cancelPad:], 0)
	le.PutUint64(b[cancelOriginNanos:], uint64(c.OriginNanos))
}

// Decode reads c from b; see the package comment.
func (c *CancelOrder) Decode(b []byte) error {
	if len(b) < CancelOrderLen {
		return errShort("cancel order", CancelOrderLen, len(b))
	}
	c.OrderID = le.Uint64(b[cancelID:])
	c.Instrument = le.Uint32(b[cancelInstrument:])
	c.OriginNanos = int64(le.Uint64(b[cancelOriginNanos:]))
	return nil
}

// ExecutionReport tells a client what happened to its order. Reports of
// one order are sent in order, New first (unless Rejected), one terminal
// report (Fill, Cancelled, Rejected) last.
type ExecutionReport struct {
	OrderID     uint64
	ExecID      uint64 // exchange-wide sequence number of the report, from 1
	Instrument  uint32
	ExecType    ExecType
	Reason      Reason // for Cancelled, Rejected and CancelRejected
	Side        Side
	OrderQty    int64 // the order's quantity
	LastPx      int64 // fill price (PartialFill, Fill)
	LastQty     int64 // fill quantity (PartialFill, Fill)
	LeavesQty   int64 // still live after this report (0 once terminal)
	CumQty      int64 // filled so far, this report included
	OriginNanos int64 // FeedNanos of the quote that caused this event
}

// TypeID returns TypeExecutionReport.
func (*ExecutionReport) TypeID() int32 { return TypeExecutionReport }

// EncodedLen returns ExecutionReportLen.
func (*ExecutionReport) EncodedLen() int { return ExecutionReportLen }

// Encode writes r into b[:ExecutionReportLen].
func (r *ExecutionReport) Encode(b []byte) {
	_ = b[ExecutionReportLen-1]
	le.PutUint64(b[reportID:], r.OrderID)
	le.PutUint64(b[reportExecID:], r.ExecID)
	le.PutUint32(b[reportInstrument:], r.Instrument)
	b[reportExecType] = byte(r.ExecType)
	b[reportReason] = byte(r.Reason)
	b[reportSide] = byte(r.Side)
	b[reportPad] = 0
	le.PutUint64(b[reportOrderQty:], uint64(r.OrderQty))
	le.PutUint64(b[reportLastPx:], uint64(r.LastPx))
	le.PutUint64(b[reportLastQty:], uint64(r.LastQty))
	le.PutUint64(b[reportLeavesQty:], uint64(r.LeavesQty))
	le.PutUint64(b[reportCumQty:], uint64(r.CumQty))
	le.PutUint64(b[reportOriginNanos:], uint64(r.OriginNanos))
}

// Decode reads r from b; see the package comment.
func (r *ExecutionReport) Decode(b []byte) error {
	if len(b) < ExecutionReportLen {
		return errShort("execution report", ExecutionReportLen, len(b))
	}
	r.OrderID = le.Uint64(b[reportID:])
	r.ExecID = le.Uint64(b[reportExecID:])
	r.Instrument = le.Uint32(b[reportInstrument:])
	r.ExecType = ExecType(b[reportExecType])
	r.Reason = Reason(b[reportReason])
	r.Side = Side(b[reportSide])
	r.OrderQty = int64(le.Uint64(b[reportOrderQty:]))
	r.LastPx = int64(le.Uint64(b[reportLastPx:]))
	r.LastQty = int64(le.Uint64(b[reportLastQty:]))
	r.LeavesQty = int64(le.Uint64(b[reportLeavesQty:]))
	r.CumQty = int64(le.Uint64(b[reportCumQty:]))
	r.OriginNanos = int64(le.Uint64(b[reportOriginNanos:]))
	return nil
}

// RiskReject tells the strategy that risk refused an order: it never
// reached the exchange.
type RiskReject struct {
	OrderID     uint64
	Instrument  uint32
	Reason      Reason
	Side        Side
	Price       int64
	Qty         int64
	OriginNanos int64 // the order's OriginNanos
}

// TypeID returns TypeRiskReject.
func (*RiskReject) TypeID() int32 { return TypeRiskReject }

// EncodedLen returns RiskRejectLen.
func (*RiskReject) EncodedLen() int { return RiskRejectLen }

// Encode writes r into b[:RiskRejectLen].
func (r *RiskReject) Encode(b []byte) {
	_ = b[RiskRejectLen-1]
	le.PutUint64(b[rejectID:], r.OrderID)
	le.PutUint32(b[rejectInstrument:], r.Instrument)
	b[rejectReason] = byte(r.Reason)
	b[rejectSide] = byte(r.Side)
	le.PutUint16(b[rejectPad:], 0)
	le.PutUint64(b[rejectPrice:], uint64(r.Price))
	le.PutUint64(b[rejectQty:], uint64(r.Qty))
	le.PutUint64(b[rejectOriginNanos:], uint64(r.OriginNanos))
}

// Decode reads r from b; see the package comment.
func (r *RiskReject) Decode(b []byte) error {
	if len(b) < RiskRejectLen {
		return errShort("risk reject", RiskRejectLen, len(b))
	}
	r.OrderID = le.Uint64(b[rejectID:])
	r.Instrument = le.Uint32(b[rejectInstrument:])
	r.Reason = Reason(b[rejectReason])
	r.Side = Side(b[rejectSide])
	r.Price = int64(le.Uint64(b[rejectPrice:]))
	r.Qty = int64(le.Uint64(b[rejectQty:]))
	r.OriginNanos = int64(le.Uint64(b[rejectOriginNanos:]))
	return nil
}

// RejectFor fills r as the risk reject of order o for reason.
func (r *RiskReject) RejectFor(o *NewOrder, reason Reason) {
	*r = RiskReject{
		OrderID:     o.OrderID,
		Instrument:  o.Instrument,
		Reason:      reason,
		Side:        o.Side,
		Price:       o.Price,
		Qty:         o.Qty,
		OriginNanos: o.OriginNanos,
	}
}
