// Package buildtags tells code and tests how the binary was built: with
// the race detector (Race), and with duty's invariant checks (Invariants,
// the duty_invariants tag, under which every unsafe access to shared
// memory is bounds-checked and panics when out of range), in one place
// for every package.
package buildtags
