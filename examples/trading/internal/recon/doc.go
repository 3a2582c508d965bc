// Package recon is the trading demo's accounting: one plain counter struct
// per stage (Feed, Strategy, Risk, Exchange), each owned and incremented by
// its stage's goroutine (publish a copy to read it live elsewhere), and a
// Ledger that puts the four together at the end of a run, once every
// mailbox has drained, and checks that every quote, order, cancel, report
// and position is accounted for: Check returns one line per violated
// equation (the equations are listed in ../DESIGN.md, "Reconciliation";
// the Positions fields come from each stage's Positions method, Counts
// leaves them nil). Ledger.Line renders the outcome as the demo's last
// line: "reconciliation: ok" or "reconciliation: " followed by the
// problems.
package recon
