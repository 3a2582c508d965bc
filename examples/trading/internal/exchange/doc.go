// Package exchange is the exchange side of the trading demo: one
// book.Book per instrument, the translation of client messages
// (msg.NewOrder, msg.CancelOrder) into execution reports, and the "other
// participants": resting liquidity the exchange places from each quote so
// that the strategy's orders have something to trade with.
//
// # Reports
//
// Every call returns the execution reports to send to the client, in the
// order to send them, in a slice that aliases the exchange's buffer and is
// valid until the next call. For a new order:
//
//   - refused (unknown instrument, id 0 or above msg.MaxClientOrderID, bad
//     side, time in force, price or quantity, an id already resting, no
//     room in the book): one Rejected report with the reason;
//   - accepted: a New report (the ack, LeavesQty = OrderQty), then one
//     PartialFill or Fill per trade for the order and, when the other side
//     of a trade is a resting client order, one for that order too; then,
//     for an IOC order not filled in full, a Cancelled report with
//     ReasonIOCRemainder.
//
// A cancel request gets a Cancelled report (ReasonCancelRequested,
// LeavesQty 0) or, if no client order with the id rests in the
// instrument's book (unknown, already filled or cancelled, IOC, or an
// id of another participant), a CancelRejected report
// (ReasonUnknownOrder, or ReasonUnknownInstr).
//
// Each report's OriginNanos is the feed timestamp of the quote that caused
// it: the order's or the cancel's OriginNanos, or, for a resting client
// order filled by the liquidity placed from a quote, that quote's
// FeedNanos. ExecID numbers the reports from 1 across the exchange.
//
// # Other participants' liquidity
//
// OnQuote replaces the instrument's participant orders with
// Config.LiquidityLevels Limit orders per side placed from the quote, as
// ../DESIGN.md, "The other participants", describes. A quote with BidPx ≥
// AskPx or a non-positive price is ignored (Liquidity.BadQuotes), a side
// with a non-positive size gets no orders, and a participant order the
// book has no room for is skipped (Liquidity.Refused).
//
// # Counters and allocation
//
// Counts returns the recon.Exchange counters (client orders only);
// Liquidity the participant statistics. After New, OnQuote, OnNewOrder
// and OnCancel allocate nothing in the steady state (the report buffer
// grows to the most reports one call produced, then is reused).
//
// An Exchange is not safe for concurrent use: it belongs to the exchange
// agent's goroutine.
package exchange
