package feed_test

import (
	"fmt"

	"github.com/dutyrt/duty/examples/trading/internal/feed"
	"github.com/dutyrt/duty/examples/trading/internal/msg"
)

func Example() {
	g, _ := feed.New(feed.Config{Instruments: 2, Seed: 1, StartPx: 1000})
	var q msg.Quote
	for range 6 {
		g.Next(&q)
		fmt.Printf("#%d t=%d inst %d: %d x %d / %d x %d\n", q.Seq, q.FeedNanos, q.Instrument, q.BidQty, q.BidPx, q.AskPx, q.AskQty)
	}
	// Output:
	// #1 t=1000 inst 0: 25 x 1000 / 1003 x 13
	// #2 t=2000 inst 0: 41 x 1000 / 1003 x 41
	// #3 t=3000 inst 0: 32 x 1000 / 1003 x 16
	// #4 t=4000 inst 1: 7 x 999 / 1000 x 11
	// #5 t=5000 inst 1: 44 x 1000 / 1001 x 19
	// #6 t=6000 inst 1: 42 x 1000 / 1001 x 19
}
