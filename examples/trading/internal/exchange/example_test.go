package exchange_test

import (
	"fmt"

	"github.com/dutyrt/duty/examples/trading/internal/exchange"
	"github.com/dutyrt/duty/examples/trading/internal/msg"
)

func Example() {
	ex, _ := exchange.New(exchange.Config{Instruments: 1, LiquidityLevels: 2})

	// A quote puts the other participants' liquidity in the book:
	// asks 101x3 and 102x6, bids 99x5 and 98x10.
	ex.OnQuote(&msg.Quote{Instrument: 0, BidPx: 99, BidQty: 5, AskPx: 101, AskQty: 3, FeedNanos: 1_000})

	// An aggressive IOC buy for 10 up to 102.
	order := msg.NewOrder{OrderID: 1, Instrument: 0, Side: msg.Buy, TimeInForce: msg.IOC, Price: 102, Qty: 10, OriginNanos: 1_000}
	for _, r := range ex.OnNewOrder(&order) {
		fmt.Printf("#%d order %d %s last %d@%d cum %d leaves %d %s\n",
			r.ExecID, r.OrderID, r.ExecType, r.LastQty, r.LastPx, r.CumQty, r.LeavesQty, r.Reason)
	}
	c := ex.Counts()
	fmt.Println("orders", c.Orders, "filled qty", c.FilledQty, "open", c.Open)
	// Output:
	// #1 order 1 new last 0@0 cum 0 leaves 10 none
	// #2 order 1 partial-fill last 3@101 cum 3 leaves 7 none
	// #3 order 1 partial-fill last 6@102 cum 9 leaves 1 none
	// #4 order 1 cancelled last 0@0 cum 9 leaves 0 ioc-remainder
	// orders 1 filled qty 9 open 0
}
