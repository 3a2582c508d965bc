package strategy_test

import (
	"fmt"

	"github.com/dutyrt/duty/examples/trading/internal/msg"
	"github.com/dutyrt/duty/examples/trading/internal/strategy"
)

func Example() {
	cfg := strategy.DefaultConfig(1)
	cfg.Seed = 1
	cfg.StaleQuotes = 2
	s, _ := strategy.New(cfg)

	for seq := uint64(1); seq <= 8; seq++ {
		q := msg.Quote{Instrument: 0, Seq: seq, FeedNanos: int64(seq), BidPx: 1000, BidQty: 10, AskPx: 1002, AskQty: 10}
		for _, out := range s.OnQuote(&q) {
			if out.IsCancel {
				fmt.Printf("quote %d: cancel %d\n", seq, out.Cancel.OrderID)
				continue
			}
			o := out.New
			fmt.Printf("quote %d: order %d %s %s %d@%d\n", seq, o.OrderID, o.Side, o.TimeInForce, o.Qty, o.Price)
			// Pretend the exchange acked it (and filled the IOCs).
			s.OnReport(&msg.ExecutionReport{OrderID: o.OrderID, ExecType: msg.New, Side: o.Side, OrderQty: o.Qty, LeavesQty: o.Qty})
			if o.TimeInForce == msg.IOC {
				s.OnReport(&msg.ExecutionReport{OrderID: o.OrderID, ExecType: msg.Fill, Side: o.Side, OrderQty: o.Qty, LastPx: o.Price, LastQty: o.Qty, CumQty: o.Qty})
			}
		}
	}
	c := s.Counts()
	fmt.Println("orders", c.Orders, "cancels", c.Cancels, "open", c.Open, "position", s.Position(0))
	// Output:
	// quote 1: order 1 sell ioc 3@1000
	// quote 2: order 2 sell ioc 26@1000
	// quote 3: order 3 buy ioc 37@1003
	// quote 5: order 4 buy limit 19@1000
	// quote 7: cancel 4
	// quote 8: order 5 buy limit 31@1000
	// orders 5 cancels 1 open 2 position 8
}
