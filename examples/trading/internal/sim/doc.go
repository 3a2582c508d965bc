// Package sim's tests run the trading demo's whole pipeline in one
// goroutine, deterministically (Run, in run_test.go): every message
// encoded and decoded, the stages stepped in a seeded random order so that
// messages are in flight between them, each mailbox an unbounded FIFO
// queue. They check the end-to-end properties: every quote, order, cancel
// and report accounted for (recon.Ledger.Check), every book's invariants
// after every step, every order's reports well formed.
package sim
