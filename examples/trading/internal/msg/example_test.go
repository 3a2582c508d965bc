package msg_test

import (
	"fmt"

	"github.com/dutyrt/duty/examples/trading/internal/msg"
)

func Example() {
	// The strategy encodes an order into (ring) bytes...
	order := msg.NewOrder{OrderID: 1, Instrument: 3, Side: msg.Buy, TimeInForce: msg.IOC, Price: 10_005, Qty: 20, OriginNanos: 1_000}
	buf := make([]byte, order.EncodedLen())
	order.Encode(buf)

	// ...and the exchange decodes it, by type id, without allocating.
	var got msg.NewOrder
	if err := got.Decode(buf); err != nil {
		panic(err)
	}
	fmt.Println(order.TypeID(), len(buf), got.OrderID, got.Side, got.TimeInForce, got.Price, got.Qty)

	// A short payload is an error, never a panic.
	fmt.Println(got.Decode(buf[:10]))
	// Output:
	// 2 40 1 buy ioc 10005 20
	// msg: encoded message too short: new order needs 40 bytes, got 10
}
