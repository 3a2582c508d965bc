//go:build !race

package buildtags

// Race reports whether the binary was built with the race detector.
const Race = false
