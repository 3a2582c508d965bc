package msg

import "github.com/dutyrt/duty/message"

// MaxClientOrderID is the largest order id a client (the strategy) may
// use. Ids above it belong to the exchange's other participants (the
// resting liquidity it places from quotes), so the two never collide.
// Order id 0 is invalid.
const MaxClientOrderID uint64 = 1<<62 - 1

// Type ids: one per message type, as sent to a mailbox.
const (
	TypeQuote           int32 = 1
	TypeNewOrder        int32 = 2
	TypeCancelOrder     int32 = 3
	TypeExecutionReport int32 = 4
	TypeRiskReject      int32 = 5
)

// The codecs: each message travels as its own bytes (message.Fixed).
var (
	Quotes      = message.MustFixed[Quote](TypeQuote)
	NewOrders   = message.MustFixed[NewOrder](TypeNewOrder)
	Cancels     = message.MustFixed[CancelOrder](TypeCancelOrder)
	Reports     = message.MustFixed[ExecutionReport](TypeExecutionReport)
	RiskRejects = message.MustFixed[RiskReject](TypeRiskReject)
)

// Quote is a top-of-book market-data update for one instrument.
type Quote struct {
	Instrument uint32
	_          [4]byte
	Seq        uint64 // feed sequence number, from 1, one sequence for all instruments
	FeedNanos  int64  // when the feed generated it
	BidPx      int64
	BidQty     int64
	AskPx      int64
	AskQty     int64
}

// Mid returns the mid price in ticks, rounded down, for a quote with
// 0 < BidPx < AskPx (computed so that it cannot overflow: (BidPx+AskPx)/2
// wraps negative for prices near MaxInt64).
func (q *Quote) Mid() int64 { return q.BidPx + (q.AskPx-q.BidPx)/2 }

// NewOrder asks the exchange to buy or sell.
type NewOrder struct {
	OrderID     uint64 // unique per client, 1..MaxClientOrderID
	Instrument  uint32
	Side        Side
	TimeInForce TimeInForce
	_           [2]byte
	Price       int64 // limit price in ticks
	Qty         int64
	OriginNanos int64 // FeedNanos of the quote that triggered the order
}

// CancelOrder asks the exchange to cancel a live order.
type CancelOrder struct {
	OrderID     uint64
	Instrument  uint32
	_           [4]byte
	OriginNanos int64 // FeedNanos of the quote that triggered the cancel
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
	_           byte
	OrderQty    int64 // the order's quantity
	LastPx      int64 // fill price (PartialFill, Fill)
	LastQty     int64 // fill quantity (PartialFill, Fill)
	LeavesQty   int64 // still live after this report (0 once terminal)
	CumQty      int64 // filled so far, this report included
	OriginNanos int64 // FeedNanos of the quote that caused this event
}

// RiskReject tells the strategy that risk refused an order: it never
// reached the exchange.
type RiskReject struct {
	OrderID     uint64
	Instrument  uint32
	Reason      Reason
	Side        Side
	_           [2]byte
	Price       int64
	Qty         int64
	OriginNanos int64 // the order's OriginNanos
}

// RejectFor fills r as the risk reject of order o for reason.
func (r *RiskReject) RejectFor(o *NewOrder, reason Reason) {
	*r = RiskReject{OrderID: o.OrderID, Instrument: o.Instrument, Reason: reason,
		Side: o.Side, Price: o.Price, Qty: o.Qty, OriginNanos: o.OriginNanos}
}
