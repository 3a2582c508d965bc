// Package risk is the trading demo's pre-trade risk check: every new order
// passes through a Checker before it reaches the exchange, and the Checker
// learns fills and cancels from the execution reports.
//
// # Rules
//
// CheckOrder returns msg.ReasonNone (pass) or the first rule the order
// breaks, checked in this order:
//
//  1. instrument known (ReasonUnknownInstr); side, time in force, price > 0
//     and qty > 0 valid (ReasonInvalidOrder);
//  2. qty ≤ Limits.MaxOrderQty (ReasonMaxOrderQty);
//  3. price band: |price − mid| ≤ max(PriceBandTicks, mid·PriceBandBps/10000),
//     mid being the last quote's (bid+ask)/2 for the instrument
//     (ReasonPriceBand; ReasonNoReferencePx before the first quote);
//  4. position, worst case: the position if every open order on the
//     order's side filled, plus this order, stays within ±MaxPosition:
//     position + openBuy + qty ≤ MaxPosition for a buy,
//     position − openSell − qty ≥ −MaxPosition for a sell
//     (ReasonPositionLimit). Counting open orders, not only fills, means
//     no sequence of fills can ever take the position past the limit;
//  5. order rate: a token bucket of OrdersPerSecond with Burst tokens,
//     driven by the order's OriginNanos (the feed timestamp of the quote
//     that triggered it), never by a wall clock, so a replay gives the
//     same decisions (ReasonOrderRate). It is implemented as GCRA: one
//     "theoretical arrival time" word, integer nanoseconds.
//
// The rate check comes last, so an order rejected for another reason
// consumes no token. A passed order counts as open on its side until
// execution reports close it: fills move it into the position, a
// Cancelled or Rejected report releases its remainder. Cancel requests
// always pass (OnCancel only counts them): cancelling reduces risk.
//
// # Driving a Checker
//
// One goroutine (the risk agent) calls OnQuote for every quote,
// CheckOrder for every new order (sending the order on to the exchange
// when it passes, or a msg.RiskReject built with RejectFor back to the
// strategy), OnCancel for every cancel request it forwards, and OnReport
// for every execution report. All of them are allocation-free and
// deterministic. Counts returns the recon.Risk counters.
package risk
