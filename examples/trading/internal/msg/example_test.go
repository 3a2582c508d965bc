package msg_test

import (
	"fmt"

	"github.com/dutyrt/duty/examples/trading/internal/msg"
)

func Example() {
	// The strategy encodes an order into (ring) bytes...
	order := msg.NewOrder{OrderID: 1, Instrument: 3, Side: msg.Buy, TimeInForce: msg.IOC, Price: 10_005, Qty: 20, OriginNanos: 1_000}
	buf := make([]byte, msg.NewOrders.Size(&order))
	msg.NewOrders.Encode(buf, &order)

	// ...and the exchange decodes it, without allocating.
	var got msg.NewOrder
	if err := msg.NewOrders.Decode(buf, &got); err != nil {
		panic(err)
	}
	fmt.Println(msg.NewOrders.TypeID(), len(buf), got.OrderID, got.Side, got.TimeInForce, got.Price, got.Qty)

	// A payload of the wrong length is an error, never a panic.
	fmt.Println(msg.NewOrders.Decode(buf[:10], &got))
	// Output:
	// 2 40 1 buy ioc 10005 20
	// message: payload does not decode as its type: type 2: 10 bytes, want 40
}
