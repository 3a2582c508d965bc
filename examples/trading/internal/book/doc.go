// Package book is a limit order book for one instrument: price-time
// priority, Limit and IOC orders, partial fills, cancels by order id, with
// every structure preallocated by New (Config.MaxOrders orders,
// Config.MaxLevels levels per side).
//
// Submit matches an order against the opposite side while it crosses, best
// price first and oldest first at a price, each fill at the resting order's
// price; a Limit remainder rests, an IOC remainder is cancelled
// (Result.Leaves). The book is never crossed after Submit. There is no
// self-trade prevention. A Limit order that might not find room to rest is
// refused with ErrFull before matching, so a refused order has no effect.
// Result.Fills aliases the book's buffer until the next Submit; Submit and
// Cancel allocate nothing in the steady state.
//
// Errors are unwrapped sentinels: ErrInvalidOrder (also a price or a
// quantity past MaxPrice or MaxQty), ErrDuplicateID (the id is resting),
// ErrFull, ErrUnknownOrder (Cancel of an id not resting).
// Check verifies every invariant (not crossed, levels ordered and summed,
// FIFO, 0 ≤ cum < qty, index and free list) and returns the first
// violation. A Book belongs to one goroutine.
package book
