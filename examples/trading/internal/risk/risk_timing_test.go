package risk

import (
	"testing"

	"github.com/dutyrt/duty/examples/trading/internal/msg"
)

func BenchmarkCheckOrder(b *testing.B) {
	c, _ := New(4, DefaultLimits())
	for i := range uint32(4) {
		c.OnQuote(&msg.Quote{Instrument: i, BidPx: 999, AskPx: 1001})
	}
	o := msg.NewOrder{OrderID: 1, Side: msg.Buy, TimeInForce: msg.Limit, Price: 1000, Qty: 1}
	r := msg.ExecutionReport{ExecType: msg.Cancelled, Side: msg.Buy, OrderQty: 1}
	b.ReportAllocs()
	var at int64
	for b.Loop() {
		at += 10_000
		o.OriginNanos = at
		o.Instrument = uint32(at/10_000) % 4
		if c.CheckOrder(&o) == msg.ReasonNone {
			r.Instrument = o.Instrument
			c.OnReport(&r)
		}
	}
}
