// Package exchange is the trading demo's exchange: one book.Book per
// instrument, client messages (msg.NewOrder, msg.CancelOrder) turned into
// execution reports, and the other participants' liquidity placed from
// each quote (../DESIGN.md, "The other participants").
//
// Each call returns its reports in sending order, in a slice valid until
// the next call. A refused new order (bad instrument, id, side, time in
// force, price or quantity, duplicate id, full book) gets one Rejected
// report; an accepted one a New report, then a PartialFill or Fill per
// trade (also for the resting client order it hits), then, for an IOC not
// filled in full, Cancelled (ReasonIOCRemainder). A cancel gets Cancelled
// or CancelRejected. OriginNanos is the timestamp of the quote that caused
// the report; ExecID counts reports from 1.
//
// Counts returns the recon.Exchange counters (client orders only),
// Liquidity the participant statistics. Nothing allocates in the steady
// state. An Exchange belongs to one goroutine.
package exchange
