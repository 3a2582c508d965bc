// Package idmap is a fixed-capacity hash map from order id (uint64, not 0)
// to a slot index (int32), for the order book and the strategy's open
// orders: open addressing with linear probing and backward-shift deletion
// (no tombstones), so a long run of inserts and deletes never degrades and
// never allocates. All storage is allocated by New; Put on a full map
// returns ErrFull instead of growing.
//
// A Map is not safe for concurrent use: it belongs to one goroutine (the
// agent that owns the book or the strategy).
package idmap
