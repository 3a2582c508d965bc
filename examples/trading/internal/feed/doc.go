// Package feed generates the trading demo's synthetic quotes for N
// instruments from a seeded PCG: each Next moves a random instrument's bid
// by −1, 0 or +1 tick (not below Config.MinPx), redraws its spread one time
// in four and both sizes. Seq counts quotes from 1; FeedNanos comes from
// Config.Now or, without it, a synthetic clock, so that a seed gives the
// same stream. Next allocates nothing; a Generator belongs to one goroutine.
package feed
