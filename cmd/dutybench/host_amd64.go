package main

import (
	"strings"

	"github.com/dutyrt/duty/internal/x86"
)

// cpuidHypervisor returns the vendor string of CPUID leaf 0x40000000 and
// true when leaf 1's hypervisor bit is set, false when it is clear.
func cpuidHypervisor() (string, bool) {
	if _, _, c, _ := x86.CPUID(1, 0); c&(1<<31) == 0 {
		return "", false
	}
	_, b, c, d := x86.CPUID(0x40000000, 0)
	var s []byte
	for _, w := range []uint32{b, c, d} {
		s = append(s, byte(w), byte(w>>8), byte(w>>16), byte(w>>24))
	}
	return strings.TrimRight(string(s), "\x00 "), true
}
