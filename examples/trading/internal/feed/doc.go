// Package feed generates the trading demo's synthetic market data: quotes
// for N instruments, each a random walk of its bid price with a random
// spread and random sizes, from a seeded PRNG (PCG), so a seed always
// gives the same sequence of quotes.
//
// Each Next picks an instrument at random, moves its bid by −1, 0 or +1
// tick (never below Config.MinPx), redraws its spread (1..MaxSpread
// ticks) one time in four, draws both sizes (1..MaxSize), and fills the
// quote: Seq counts quotes from 1 across instruments, FeedNanos comes from
// Config.Now, or, without it, from a synthetic clock (StartNanos + Seq ×
// Interval) that makes the whole stream, timestamps included,
// reproducible.
//
// The "other participants" whose liquidity the strategy trades against
// are on the exchange side: package exchange places resting orders from
// each quote (see its package comment). So the same quote that the
// strategy reacts to is what the book holds when the order arrives, give
// or take the quotes in flight.
//
// A Generator belongs to one goroutine (the market-data agent). Next
// allocates nothing.
package feed
