//go:build !duty_invariants

package ringbuf

const invariants = false
