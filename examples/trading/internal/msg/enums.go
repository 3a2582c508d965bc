package msg

// Side is an order's side.
type Side uint8

// Sides. The zero value is invalid.
const (
	Buy  Side = 1
	Sell Side = 2
)

// Valid reports whether s is Buy or Sell.
func (s Side) Valid() bool { return s == Buy || s == Sell }

// Opposite returns the other side (Sell for Buy, Buy for Sell).
func (s Side) Opposite() Side {
	if s == Buy {
		return Sell
	}
	return Buy
}

func (s Side) String() string { return nameOf(s, "side?", "", "buy", "sell") }

// TimeInForce says what happens to the part of an order that does not
// fill at once.
type TimeInForce uint8

// Times in force. The zero value is invalid.
const (
	// Limit rests the unfilled remainder in the book until it fills or is
	// cancelled.
	Limit TimeInForce = 1
	// IOC (immediate or cancel) cancels the unfilled remainder at once.
	IOC TimeInForce = 2
)

// Valid reports whether t is Limit or IOC.
func (t TimeInForce) Valid() bool { return t == Limit || t == IOC }

func (t TimeInForce) String() string { return nameOf(t, "tif?", "", "limit", "ioc") }

// ExecType is the kind of an execution report.
type ExecType uint8

// Execution report kinds. Fill, Cancelled and Rejected are terminal: an
// order gets exactly one of them, last. CancelRejected answers a
// CancelOrder that found no live order and is not about the order's state.
const (
	New            ExecType = 1 // accepted by the exchange (the ack)
	PartialFill    ExecType = 2 // LastQty filled, LeavesQty > 0 still live
	Fill           ExecType = 3 // LastQty filled, nothing left: terminal
	Cancelled      ExecType = 4 // remainder cancelled (Reason says why): terminal
	Rejected       ExecType = 5 // refused by the exchange, never live: terminal
	CancelRejected ExecType = 6 // a cancel for an order that is not live
)

// Terminal reports whether t ends an order's life.
func (t ExecType) Terminal() bool { return t == Fill || t == Cancelled || t == Rejected }

func (t ExecType) String() string {
	return nameOf(t, "exec?", "", "new", "partial-fill", "fill", "cancelled", "rejected", "cancel-rejected")
}

// Reason says why an order was rejected or cancelled.
type Reason uint8

// Reasons. ReasonNone is the zero value: no reason (an accepted order).
const (
	ReasonNone Reason = iota
	// Risk rejects.
	ReasonPositionLimit   // worst-case position would exceed the limit
	ReasonOrderRate       // order rate limit exceeded
	ReasonPriceBand       // price outside the band around the last mid
	ReasonMaxOrderQty     // quantity above the per-order limit
	ReasonNoReferencePx   // no quote yet for the instrument: no band
	ReasonUnknownInstr    // instrument id out of range
	ReasonInvalidOrder    // bad side, time in force, price or quantity
	ReasonBookFull        // the book has no room for a resting order
	ReasonDuplicateID     // an order with this id is live
	ReasonUnknownOrder    // cancel: no live order with this id
	ReasonCancelRequested // cancelled by a CancelOrder
	ReasonIOCRemainder    // IOC remainder cancelled after matching
	reasonCount
)

// Valid reports whether r is a known reason.
func (r Reason) Valid() bool { return r < reasonCount }

// NumReasons is the number of reasons, for arrays indexed by Reason.
const NumReasons = int(reasonCount)

func (r Reason) String() string {
	return nameOf(r, "reason?", "none", "position-limit", "order-rate", "price-band", "max-order-qty",
		"no-reference-price", "unknown-instrument", "invalid-order", "book-full", "duplicate-id",
		"unknown-order", "cancel-requested", "ioc-remainder")
}

// nameOf returns names[v], or unknown for a value without a name.
func nameOf[E ~uint8](v E, unknown string, names ...string) string {
	if int(v) < len(names) && names[v] != "" {
		return names[v]
	}
	return unknown
}
