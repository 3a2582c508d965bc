// Package strategy is the trading demo's strategy: a deterministic,
// seeded market maker/taker that turns quotes into orders and tracks its
// open orders and positions from execution reports and risk rejects.
//
// # Rule
//
// On each quote for instrument i (OnQuote):
//
//  1. every resting Limit order of i that the exchange has acked, that
//     has no cancel pending and that has seen Config.StaleQuotes quotes of
//     i since it was sent is cancelled (a CancelOrder);
//  2. with probability OrderPerMille/1000, if i has fewer than
//     MaxOpenPerInstrument open orders and a slot is free, one new order:
//     the side leans against the position (buy probability 1/2 −
//     position/(2·MaxPosition), clamped to [5%, 95%]), the quantity is
//     1..MaxQty, and
//     - with probability RoguePerMille/1000 it is a rogue order meant to
//     break a risk limit: quantity RogueQty, or a price RogueTicks away
//     from the quote (half each), sent as IOC;
//     - else with probability AggressivePerMille/1000 it is an IOC that
//     crosses the quote by 0..CrossTicks ticks (a buy at ask+k, a sell at
//     bid−k): it fills against the book, often in part or across levels;
//     - else it is a passive Limit order at the touch or one tick inside
//     the spread (a buy at bid or bid+1): it rests, and fills when the
//     market moves through it, or is cancelled when stale.
//
// Every order's OriginNanos is the quote's FeedNanos. Order ids count up
// from Config.FirstOrderID. All randomness comes from one PCG seeded with
// Config.Seed: the same seed and the same input sequence give the same
// output.
//
// # Driving a Strategy
//
// One goroutine (the strategy agent) calls OnQuote, OnReport and
// OnRiskReject. OnQuote returns the messages to send, in order, as a
// slice of Out that aliases the strategy's buffer and is valid until the
// next OnQuote; an Out holds a msg.NewOrder or (IsCancel) a
// msg.CancelOrder. The
// caller must send all of them (retrying on back-pressure): the strategy
// counts them as sent. Nothing allocates after New.
//
// Counts returns the recon.Strategy counters. An order counts as open
// from the moment it is returned until its terminal report (Fill,
// Cancelled, Rejected) or its RiskReject arrives. A report or reject for
// an order the strategy does not track (other than a CancelRejected,
// which normally arrives after the order has ended) is counted in
// Unknown.
package strategy
