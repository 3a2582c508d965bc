// Package book is a limit order book for one instrument: price-time
// priority, limit and IOC orders, partial fills, cancels by order id, best
// bid/ask and depth, with every structure preallocated.
//
// # Matching
//
// Submit matches an incoming order (the taker) against the opposite side
// while it crosses: a buy against asks priced at or below its limit, a
// sell against bids at or above it, best price first and, at one price,
// oldest order first. Each fill trades at the resting (maker) order's
// price. What is left of a Limit order rests at its price behind the
// orders already there; what is left of an IOC order is cancelled (it is
// reported in Result.Leaves and never rests). A book is never crossed
// after Submit returns: best bid < best ask whenever both exist.
//
// Orders of the same owner may match each other (there is no self-trade
// prevention): the book does not know owners.
//
// # Capacity
//
// Config.MaxOrders resting orders and Config.MaxLevels price levels per
// side are allocated by New. A Limit order that could not rest if it did
// not fill (no free order slot, or a new price level on a side that has
// MaxLevels) is refused with ErrFull before matching, so a refused order
// has no effect; the check is conservative (it ignores the room matching
// would free). IOC orders never need room. Nothing grows after New except
// the fill buffer, which grows to the most fills one Submit produced and
// is then reused: Submit and Cancel allocate nothing in the steady state.
//
// # Results and errors
//
// Submit returns its fills in Result.Fills, a slice that aliases the
// book's buffer and is valid until the next Submit. Errors are the
// package's sentinels, returned unwrapped without allocation (compare with
// errors.Is): ErrInvalidOrder, ErrDuplicateID (an order with the id is
// resting; ids of orders no longer in the book may be reused), ErrFull,
// ErrUnknownOrder (Cancel of an id that is not resting: never seen,
// already filled, already cancelled, or an IOC order).
//
// # Invariants
//
// Check verifies the whole structure and returns an error describing the
// first violation: no crossed book, levels strictly ordered, every level
// non-empty with its aggregate quantity and count right, FIFO (arrival
// order) at each level, every resting order with 0 ≤ cum < qty, leaves > 0
// and cum + leaves == qty, the id index and the free list consistent. It
// walks everything: tests call it after each step, production code never
// needs to.
//
// A Book is not safe for concurrent use: it belongs to the exchange
// agent's goroutine.
package book
