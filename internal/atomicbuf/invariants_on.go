//go:build duty_invariants

package atomicbuf

const invariants = true
