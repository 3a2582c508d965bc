package sim_test

import (
	"fmt"

	"github.com/dutyrt/duty/examples/trading/internal/risk"
	"github.com/dutyrt/duty/examples/trading/internal/sim"
	"github.com/dutyrt/duty/examples/trading/internal/strategy"
)

func ExampleRun() {
	limits := risk.DefaultLimits()
	limits.OrdersPerSecond = 380_000 // the synthetic feed makes a quote per µs
	res, err := sim.Run(sim.Config{
		Instruments: 2,
		Quotes:      5_000,
		Seed:        1,
		Strategy:    strategy.Config{Seed: 1},
		Limits:      limits,
		CheckBooks:  true,
		Audit:       true,
	})
	if err != nil {
		panic(err)
	}
	x := res.Ledger.Exchange
	fmt.Println("every stage saw", res.Ledger.Feed.Quotes, "quotes; orders reached the exchange:", x.Orders > 0, "fills:", x.Reports.Fills > 0)
	fmt.Println(res.Ledger.Line())
	// Output:
	// every stage saw 5000 quotes; orders reached the exchange: true fills: true
	// reconciliation: ok
}
