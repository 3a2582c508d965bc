package exchange

import (
	"testing"

	"github.com/dutyrt/duty/examples/trading/internal/msg"
)

// BenchmarkQuoteAndOrder: per iteration one quote (liquidity replaced:
// 6 cancels, 6 orders) and one client order (alternating IOC and limit),
// plus a cancel of an older client order.
func BenchmarkQuoteAndOrder(b *testing.B) {
	e, _ := New(Config{Instruments: 4, MaxOrders: 1024, MaxLevels: 64})
	b.ReportAllocs()
	id := uint64(1)
	var q msg.Quote
	var o msg.NewOrder
	var c msg.CancelOrder
	for b.Loop() {
		inst := uint32(id % 4)
		mid := int64(1000 + id%5)
		q = msg.Quote{Instrument: inst, Seq: id, BidPx: mid - 1, BidQty: 4, AskPx: mid + 1, AskQty: 4}
		e.OnQuote(&q)
		o = msg.NewOrder{OrderID: id, Instrument: inst, Side: msg.Side(1 + id%2), TimeInForce: msg.TimeInForce(1 + id%2), Price: mid - 2 + int64(id%5), Qty: 6}
		e.OnNewOrder(&o)
		c = msg.CancelOrder{OrderID: id - 8, Instrument: inst}
		e.OnCancel(&c)
		id++
	}
}
