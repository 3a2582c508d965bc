package hypervisor

import "strings"

// cpuid executes CPUID with eax and ecx (cpuid_amd64.s).
//
//go:noescape
func cpuid(eax, ecx uint32) (a, b, c, d uint32)

// cpuidVendor returns the vendor string of leaf 0x40000000 and true when
// leaf 1's hypervisor bit is set, false when it is clear.
func cpuidVendor() (string, bool) {
	if _, _, c, _ := cpuid(1, 0); c&(1<<31) == 0 {
		return "", false
	}
	_, b, c, d := cpuid(0x40000000, 0)
	var s []byte
	for _, w := range []uint32{b, c, d} {
		s = append(s, byte(w), byte(w>>8), byte(w>>16), byte(w>>24))
	}
	return strings.TrimRight(string(s), "\x00 "), true
}
