//go:build duty_invariants

package buildtags

// Invariants reports whether the binary was built with the
// duty_invariants tag.
const Invariants = true
