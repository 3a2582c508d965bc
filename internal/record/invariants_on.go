//go:build duty_invariants

package record

// invariants enables checks of internal invariants on hot paths. They panic,
// so that a test run with -tags duty_invariants stops at the broken one.
const invariants = true
