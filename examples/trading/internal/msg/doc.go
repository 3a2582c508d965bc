// Package msg defines the trading demo's wire messages: structs of
// fixed-size fields with explicit padding, sent as their own bytes by the
// message.Fixed codecs (Quotes, NewOrders, Cancels, Reports, RiskRejects),
// unchanged through a mailbox, a shared-memory ring or a journal. Enum
// fields are decoded as they are and checked by the receiver: a bad order
// deserves a Rejected report, not a dropped message. Prices are ticks,
// quantities lots, timestamps ns of a clock the processes share;
// OriginNanos is the timestamp of the quote that caused the event.
package msg
