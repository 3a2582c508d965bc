package exchange

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/examples/trading/internal/msg"
)

// FuzzExchange feeds arbitrary bytes, cut into quotes, orders and cancels
// as another process might send them, to an exchange: it never panics,
// every book's invariants hold after each message, and the client
// counters balance.
func FuzzExchange(f *testing.F) {
	seed := make([]byte, 0, 512)
	for _, m := range []interface {
		Encode([]byte)
		EncodedLen() int
		TypeID() int32
	}{
		&msg.Quote{Instrument: 0, BidPx: 99, BidQty: 5, AskPx: 101, AskQty: 5},
		&msg.NewOrder{OrderID: 1, Side: msg.Buy, TimeInForce: msg.IOC, Price: 102, Qty: 12},
		&msg.NewOrder{OrderID: 2, Side: msg.Sell, TimeInForce: msg.Limit, Price: 100, Qty: 3},
		&msg.CancelOrder{OrderID: 2},
	} {
		b := make([]byte, m.EncodedLen())
		m.Encode(b)
		seed = append(seed, byte(m.TypeID()))
		seed = append(seed, b...)
	}
	f.Add(seed)
	f.Add([]byte{2, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1, 0, 0, 0, 1, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := New(Config{Instruments: 2, MaxOrders: 16, MaxLevels: 4, LiquidityLevels: 2})
		require.NoError(t, err)
		for len(data) > 0 {
			kind := data[0] % 3
			data = data[1:]
			var q msg.Quote
			var o msg.NewOrder
			var c msg.CancelOrder
			switch kind {
			case 0:
				if q.Decode(data) != nil {
					return
				}
				data = data[msg.QuoteLen:]
				e.OnQuote(&q)
			case 1:
				if o.Decode(data) != nil {
					return
				}
				data = data[msg.NewOrderLen:]
				rs := e.OnNewOrder(&o)
				require.NotEmpty(t, rs)
				require.Contains(t, []msg.ExecType{msg.New, msg.Rejected}, rs[0].ExecType)
			case 2:
				if c.Decode(data) != nil {
					return
				}
				data = data[msg.CancelOrderLen:]
				require.Len(t, e.OnCancel(&c), 1)
			}
			require.NoError(t, e.Check())
			x := e.Counts()
			require.Equal(t, x.Orders, x.Reports.Acks+x.Reports.Rejected)
			require.Equal(t, x.Reports.Acks, x.Reports.Fills+x.Reports.Cancelled+x.Open)
			require.Equal(t, x.Cancels, x.CancelledByRequest+x.Reports.CancelRejects)
		}
	})
}
