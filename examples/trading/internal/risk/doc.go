// Package risk is the trading demo's pre-trade check. CheckOrder returns
// msg.ReasonNone or the first rule an order breaks, in this order:
//
//  1. a known instrument, valid side, time in force, price and qty;
//  2. qty ≤ Limits.MaxOrderQty;
//  3. |price − mid| ≤ max(PriceBandTicks, mid·PriceBandBps/10000), mid
//     from the instrument's last quote (ReasonNoReferencePx before one);
//  4. the worst-case position (every open order on its side filled, plus
//     this one) within ±MaxPosition;
//  5. the order rate: GCRA with OrdersPerSecond and Burst, on the orders'
//     OriginNanos, never a wall clock, so that a replay decides the same.
//
// A passed order is open until its reports close it. Cancels always pass.
// One goroutine calls OnQuote, CheckOrder, OnCancel and OnReport; all are
// deterministic and allocation-free. Counts returns the recon.Risk counters.
package risk
