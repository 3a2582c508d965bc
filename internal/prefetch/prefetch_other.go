//go:build !amd64

package prefetch

import "unsafe"

func write(unsafe.Pointer) {}
func read(unsafe.Pointer)  {}

func prefetchW() bool { return false }

var _ = Disabled
