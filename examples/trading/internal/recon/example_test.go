package recon_test

import (
	"fmt"

	"github.com/dutyrt/duty/examples/trading/internal/recon"
)

func ExampleLedger_Line() {
	// One quote, one order that was filled: everything adds up.
	reports := recon.Reports{Acks: 1, Fills: 1}
	l := recon.Ledger{
		Feed:     recon.Feed{Quotes: 1},
		Strategy: recon.Strategy{Quotes: 1, Orders: 1, Reports: reports, FilledQty: 5},
		Risk:     recon.Risk{Quotes: 1, Orders: 1, Passed: 1, Reports: reports, FilledQty: 5},
		Exchange: recon.Exchange{Quotes: 1, Orders: 1, Reports: reports, FilledQty: 5},
	}
	fmt.Println(l.Line())

	// The strategy missed the fill report.
	l.Strategy.Reports.Fills = 0
	l.Strategy.FilledQty = 0
	fmt.Println(l.Line())
	// Output:
	// reconciliation: ok
	// reconciliation: fills: exchange sent 1 != strategy received 0; strategy orders: sent 1 != filled+cancelled+rejected+risk-rejected+open 0; filled qty: exchange 5 != strategy 0
}
