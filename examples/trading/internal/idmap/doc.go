// Package idmap is a fixed-capacity map from order id (not 0) to slot
// index: open addressing, linear probing, backward-shift deletion, so that
// it never degrades and never allocates after New; Put on a full map
// returns ErrFull. A Map belongs to one goroutine.
package idmap
