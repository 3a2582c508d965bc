// Package recon is the trading demo's accounting: a counter struct per
// stage, owned by its stage's goroutine, and a Ledger that checks at the
// end of a run that every quote, order, cancel, report and position is
// accounted for (../DESIGN.md, "Reconciliation"). Ledger.Line is the
// demo's last line: "reconciliation: ok" or the problems.
package recon
