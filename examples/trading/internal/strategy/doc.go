// Package strategy is the trading demo's strategy: a deterministic, seeded
// market maker/taker that turns quotes into orders and tracks its open
// orders and positions from execution reports and risk rejects.
//
// On each quote of instrument i, OnQuote cancels i's acked Limit orders
// that have seen Config.StaleQuotes quotes of i, then, with probability
// OrderPerMille/1000 and room for it, sends one order leaning against the
// position: a rogue IOC meant to break a risk limit (RoguePerMille), an
// IOC crossing the quote (AggressivePerMille), or a passive Limit at or
// inside the touch. Its OriginNanos is the quote's FeedNanos; ids count up
// from Config.FirstOrderID; one PCG seeded with Config.Seed is the only
// randomness.
//
// OnQuote's []Out (a NewOrder or, IsCancel, a CancelOrder) is valid until
// the next OnQuote, and the caller must send all of it: the strategy
// counts it as sent. An order is open until its terminal report or risk
// reject; one about an order not tracked counts in Unknown. Counts returns
// the recon.Strategy counters. Nothing allocates after New; a Strategy
// belongs to one goroutine.
package strategy
