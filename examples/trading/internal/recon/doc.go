// Package recon is the trading demo's accounting: one plain counter struct
// per stage (Feed, Strategy, Risk, Exchange), each owned and incremented by
// its stage, and a Ledger that puts the four together at the end of a run
// and checks that every quote, order, cancel and execution report is
// accounted for.
//
// The counters are plain int64 fields: a stage's struct belongs to the
// goroutine of the agent that runs the stage. To print them live from
// another goroutine, the owner publishes a copy (for example into atomics
// once per duty cycle); Check is meant for the end of a run, after every
// mailbox has been drained, when nothing is in flight.
//
// What Check verifies (each violated equation is one line of the result):
//
//   - quotes: every stage received every quote the feed generated;
//   - orders: strategy sent == risk received == risk passed + risk
//     rejected; risk rejected == risk rejects the strategy received (and
//     the per-reason counts add up); risk passed == exchange received;
//   - cancels: strategy sent == risk forwarded == exchange received ==
//     cancelled by request + cancel rejects;
//   - the exchange's orders: received == acked + rejected, and every acked
//     order ended exactly once: acked == filled + cancelled + still open;
//   - reports: each kind sent by the exchange == received by the strategy
//     == received by risk;
//   - the strategy's orders: sent == filled + cancelled + rejected by the
//     exchange + rejected by risk + still open, and its open count equals
//     the exchange's resting client orders; no report about an unknown
//     order;
//   - filled quantity: the same sum at the exchange, risk and strategy;
//   - positions: for each instrument, the strategy's and risk's Position
//     (net filled quantity, cash, unfilled quantity of live orders per
//     side) equals the exchange's, taken from the trades its books made
//     and the client orders resting in them. The counts above cannot see a
//     fill reported with the wrong side, price or instrument, or open
//     quantity released wrongly on a cancel; the positions do. The
//     Positions fields are filled by each stage's Positions method (Counts
//     leaves them nil).
//
// Ledger.Line renders the outcome as the demo's last line:
// "reconciliation: ok" or "reconciliation: " followed by the problems.
package recon
