//go:build !duty_invariants

package record

const invariants = false
