// Package msg defines the trading demo's wire messages: structs of
// fixed-size fields with explicit padding, sent as their own bytes by the
// message.Fixed codecs (Quotes, NewOrders, Cancels, Reports, RiskRejects),
// so they cross a mailbox inside one process, a shared-memory ring between
// processes or a journal unchanged. The codecs check a payload's length;
// enum fields (Side, TimeInForce, ExecType, Reason) are decoded as they
// are, and their meaning is checked by the receiver (Side.Valid,
// TimeInForce.Valid), because a bad order deserves a Rejected report, not
// a dropped message.
//
// Prices are int64 ticks, quantities int64 lots, timestamps int64
// nanoseconds from any clock shared by the processes (the demo uses a
// monotonic clock). OriginNanos in NewOrder, CancelOrder,
// ExecutionReport and RiskReject is the feed timestamp of the quote that
// caused the event: tick-to-trade latency is "now - OriginNanos" at the
// point of measurement.
package msg
