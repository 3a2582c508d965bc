package book_test

import (
	"fmt"

	"github.com/dutyrt/duty/examples/trading/internal/book"
	"github.com/dutyrt/duty/examples/trading/internal/msg"
)

func Example() {
	b, _ := book.New(book.Config{MaxOrders: 1000, MaxLevels: 100})

	// Two sellers at 101, then one at 102.
	_, _ = b.Submit(1, msg.Sell, msg.Limit, 101, 5)
	_, _ = b.Submit(2, msg.Sell, msg.Limit, 101, 5)
	_, _ = b.Submit(3, msg.Sell, msg.Limit, 102, 5)

	// A buyer takes 12 up to 102: price, then time priority.
	res, _ := b.Submit(4, msg.Buy, msg.Limit, 102, 12)
	for _, f := range res.Fills {
		fmt.Printf("%d sold %d to %d at %d (maker leaves %d)\n", f.MakerID, f.Qty, f.TakerID, f.Price, f.MakerLeaves)
	}
	fmt.Println("rested:", res.Rested, "leaves:", res.Leaves)

	// An IOC sell that finds no buyer at its price is cancelled.
	res, _ = b.Submit(5, msg.Sell, msg.IOC, 103, 1)
	fmt.Println("ioc filled:", res.Filled, "cancelled:", res.Leaves)

	_, err := b.Cancel(1)
	fmt.Println(err)
	info, _ := b.Cancel(3)
	fmt.Printf("cancelled order 3 with %d left\n", info.Leaves)
	bid, qty, _ := b.BestBid()
	fmt.Println("best bid", bid, qty, "check:", b.Check())
	// Output:
	// 1 sold 5 to 4 at 101 (maker leaves 0)
	// 2 sold 5 to 4 at 101 (maker leaves 0)
	// 3 sold 2 to 4 at 102 (maker leaves 3)
	// rested: false leaves: 0
	// ioc filled: 0 cancelled: 1
	// book: no resting order with this id
	// cancelled order 3 with 3 left
	// best bid 0 0 check: <nil>
}
