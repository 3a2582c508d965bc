package exchange

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/examples/trading/internal/msg"
	"github.com/dutyrt/duty/message"
)

// FuzzExchange feeds arbitrary bytes, cut into quotes, orders and cancels
// as another process might send them, to an exchange: it never panics,
// every book's invariants hold after each message, and the client
// counters balance.
func FuzzExchange(f *testing.F) {
	seed := make([]byte, 0, 512)
	add := func(id int32, b []byte) { seed = append(append(seed, byte(id)), b...) }
	q := msg.Quote{Instrument: 0, BidPx: 99, BidQty: 5, AskPx: 101, AskQty: 5}
	b := make([]byte, 72)
	msg.Quotes.Encode(b, &q)
	add(0, b[:msg.Quotes.Size(&q)])
	for _, o := range []msg.NewOrder{
		{OrderID: 1, Side: msg.Buy, TimeInForce: msg.IOC, Price: 102, Qty: 12},
		{OrderID: 2, Side: msg.Sell, TimeInForce: msg.Limit, Price: 100, Qty: 3},
	} {
		msg.NewOrders.Encode(b, &o)
		add(1, b[:msg.NewOrders.Size(&o)])
	}
	c := msg.CancelOrder{OrderID: 2}
	msg.Cancels.Encode(b, &c)
	add(2, b[:msg.Cancels.Size(&c)])
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
				if !take(&data, msg.Quotes, &q) {
					return
				}
				e.OnQuote(&q)
			case 1:
				if !take(&data, msg.NewOrders, &o) {
					return
				}
				rs := e.OnNewOrder(&o)
				require.NotEmpty(t, rs)
				require.Contains(t, []msg.ExecType{msg.New, msg.Rejected}, rs[0].ExecType)
			case 2:
				if !take(&data, msg.Cancels, &c) {
					return
				}
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

// take decodes a T from the start of *data and moves past it.
func take[T any](data *[]byte, c *message.Fixed[T], v *T) bool {
	n := c.Size(v)
	if len(*data) < n || c.Decode((*data)[:n], v) != nil {
		return false
	}
	*data = (*data)[n:]
	return true
}
