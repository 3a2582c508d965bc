package risk_test

import (
	"fmt"

	"github.com/dutyrt/duty/examples/trading/internal/msg"
	"github.com/dutyrt/duty/examples/trading/internal/risk"
)

func Example() {
	c, _ := risk.New(1, risk.Limits{MaxPosition: 10, MaxOrderQty: 8, OrdersPerSecond: 1000, Burst: 10, PriceBandTicks: 5})
	c.OnQuote(&msg.Quote{Instrument: 0, BidPx: 99, AskPx: 101}) // mid 100

	orders := []msg.NewOrder{
		{OrderID: 1, Side: msg.Buy, TimeInForce: msg.Limit, Price: 100, Qty: 8},
		{OrderID: 2, Side: msg.Buy, TimeInForce: msg.Limit, Price: 100, Qty: 9},  // too big
		{OrderID: 3, Side: msg.Buy, TimeInForce: msg.IOC, Price: 110, Qty: 1},    // off the band
		{OrderID: 4, Side: msg.Buy, TimeInForce: msg.Limit, Price: 100, Qty: 3},  // 8 open + 3 > 10
		{OrderID: 5, Side: msg.Sell, TimeInForce: msg.Limit, Price: 101, Qty: 3}, // sells are fine
	}
	for i := range orders {
		fmt.Println(orders[i].OrderID, c.CheckOrder(&orders[i]))
	}

	// Order 1 is cancelled: its 8 no longer count.
	c.OnReport(&msg.ExecutionReport{OrderID: 1, ExecType: msg.Cancelled, Side: msg.Buy, OrderQty: 8})
	fmt.Println(orders[3].OrderID, c.CheckOrder(&orders[3]))
	// Output:
	// 1 none
	// 2 max-order-qty
	// 3 price-band
	// 4 position-limit
	// 5 none
	// 4 none
}
