// Package msg defines the trading demo's wire messages: fixed-layout,
// little-endian binary records with no pointers, so they can cross a
// mailbox inside one process or a shared-memory ring between processes
// unchanged.
//
// Each message type has a type id (TypeQuote .. TypeRiskReject, small
// constants ≥ 1 as a mailbox requires), a fixed encoded length
// (QuoteLen, NewOrderLen, ...) and three methods matching package
// mailbox's typed-message contract:
//
//	TypeID() int32        // the type id
//	EncodedLen() int      // the fixed length
//	Encode(b []byte)      // writes exactly EncodedLen bytes into b
//	Decode(b []byte) error
//
// Encode writes every byte of the layout, padding included (as zero), so
// a record written into reused ring space carries no stale bytes. b must
// be at least EncodedLen bytes long: a shorter b is a bug in the caller
// and panics, like binary.LittleEndian.PutUint64 does.
//
// Decode accepts any input: a payload shorter than the layout returns an
// error wrapping ErrShort (with both lengths) and leaves the receiver
// unchanged; trailing bytes beyond the layout are ignored (room for a
// later version to extend a message); padding is ignored. Decode never
// panics and does not retain b, which may alias a ring. It checks
// structure only: enum fields (Side, TimeInForce, ExecType, Reason) are
// decoded as they are, and their meaning is checked by the receiver
// (Side.Valid, TimeInForce.Valid), because a bad order deserves a
// Rejected report, not a dropped message.
//
// Encode and Decode allocate nothing on success. All methods are plain
// functions of their receiver: a message value belongs to whoever holds
// it, and is safe to use from one goroutine at a time.
//
// Prices are int64 ticks, quantities int64 lots, timestamps int64
// nanoseconds from any clock shared by the processes (the demo uses a
// monotonic clock). OriginNanos in NewOrder, CancelOrder,
// ExecutionReport and RiskReject is the feed timestamp of the quote that
// caused the event: tick-to-trade latency is "now - OriginNanos" at the
// point of measurement. The byte layouts are listed in layout.go and in
// examples/trading/internal/DESIGN.md.
package msg
