// Package futex sleeps on, and wakes, 32-bit words in memory that
// processes may share (a MAP_SHARED mapping): Linux's futex(2), shared
// (not FUTEX_PRIVATE), and futex_waitv(2) to sleep on several words at
// once. Where the platform has neither (or the kernel lacks futex_waitv),
// a wait is a short sleep and a wake does nothing: callers stay correct,
// since they re-check what they wait for after every return, and only
// wake up later.
//
// A wait returns when the word no longer holds the value it was given (at
// the call, or after a wake), when the timeout passes, or spuriously:
// callers always re-check their condition.
package futex
