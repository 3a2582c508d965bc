//go:build !amd64

package prefetch

import "unsafe"

func write(unsafe.Pointer)           {}
func read(unsafe.Pointer)            {}
func demote(unsafe.Pointer, int)     {}
func writeLines(unsafe.Pointer, int) {}

func prefetchW() bool { return false }
func cldemote() bool  { return false }

var _, _ = Disabled, NoDemote
