// Package sim runs the trading demo's whole pipeline in one goroutine,
// deterministically: feed → strategy → risk → exchange, with the
// execution reports going back to the strategy and to risk, every message
// encoded to its wire bytes and decoded on the other side, and the stages
// stepped in a seeded random order so messages are in flight between them
// as they would be between agents. It is the reference for wiring the
// stages into agents and mailboxes (each stage's handler here is what an
// agent's mailbox handler does), and the test bed for the end-to-end
// properties: every quote, order, cancel and report accounted for
// (recon.Ledger.Check), every book's invariants after every step
// (no crossed book, FIFO, fills never above the order quantity), and
// every order's reports well formed (Audit).
//
// Mailboxes are modelled as unbounded FIFO queues of encoded messages,
// one per receiving stage, as the demo's agents have one mailbox each:
//
//	strategy: quotes, risk rejects, execution reports
//	risk:     quotes, new orders, cancels, execution reports
//	exchange: quotes, new orders and cancels that passed risk
//
// Run is for tests and examples: it allocates as its queues grow.
package sim
