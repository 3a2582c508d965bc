package msg

// Type ids: one per message type, as sent to a mailbox.
const (
	TypeQuote           int32 = 1
	TypeNewOrder        int32 = 2
	TypeCancelOrder     int32 = 3
	TypeExecutionReport int32 = 4
	TypeRiskReject      int32 = 5
)

// Encoded lengths: every message has a fixed layout, a multiple of 8 bytes.
const (
	QuoteLen           = 56
	NewOrderLen        = 40
	CancelOrderLen     = 24
	ExecutionReportLen = 72
	RiskRejectLen      = 40
)

// Quote layout (little-endian):
//
//	 0 uint32 Instrument
//	 4 uint32 zero padding
//	 8 uint64 Seq
//	16 int64  FeedNanos
//	24 int64  BidPx
//	32 int64  BidQty
//	40 int64  AskPx
//	48 int64  AskQty
const (
	quoteInstrument = 0
	quotePad        = 4
	quoteSeq        = 8
	quoteFeedNanos  = 16
	quoteBidPx      = 24
	quoteBidQty     = 32
	quoteAskPx      = 40
	quoteAskQty     = 48
)

// NewOrder layout:
//
//	 0 uint64 OrderID
//	 8 uint32 Instrument
//	12 uint8  Side
//	13 uint8  TimeInForce
//	14 [2]    zero padding
//	16 int64  Price
//	24 int64  Qty
//	32 int64  OriginNanos
const (
	newOrderID          = 0
	newOrderInstrument  = 8
	newOrderSide        = 12
	newOrderTIF         = 13
	newOrderPad         = 14
	newOrderPrice       = 16
	newOrderQty         = 24
	newOrderOriginNanos = 32
)

// CancelOrder layout:
//
//	 0 uint64 OrderID
//	 8 uint32 Instrument
//	12 uint32 zero padding
//	16 int64  OriginNanos
const (
	cancelID          = 0
	cancelInstrument  = 8
	cancelPad         = 12
	cancelOriginNanos = 16
)

// ExecutionReport layout:
//
//	 0 uint64 OrderID
//	 8 uint64 ExecID
//	16 uint32 Instrument
//	20 uint8  ExecType
//	21 uint8  Reason
//	22 uint8  Side
//	23 uint8  zero padding
//	24 int64  OrderQty
//	32 int64  LastPx
//	40 int64  LastQty
//	48 int64  LeavesQty
//	56 int64  CumQty
//	64 int64  OriginNanos
const (
	reportID          = 0
	reportExecID      = 8
	reportInstrument  = 16
	reportExecType    = 20
	reportReason      = 21
	reportSide        = 22
	reportPad         = 23
	reportOrderQty    = 24
	reportLastPx      = 32
	reportLastQty     = 40
	reportLeavesQty   = 48
	reportCumQty      = 56
	reportOriginNanos = 64
)

// RiskReject layout:
//
//	 0 uint64 OrderID
//	 8 uint32 Instrument
//	12 uint8  Reason
//	13 uint8  Side
//	14 [2]    zero padding
//	16 int64  Price
//	24 int64  Qty
//	32 int64  OriginNanos
const (
	rejectID          = 0
	rejectInstrument  = 8
	rejectReason      = 12
	rejectSide        = 13
	rejectPad         = 14
	rejectPrice       = 16
	rejectQty         = 24
	rejectOriginNanos = 32
)
