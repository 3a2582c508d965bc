//go:build amd64

package x86

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVendor checks CPUID against what Linux read: leaf 0's vendor string
// (EBX, EDX, ECX) is /proc/cpuinfo's vendor_id.
func TestVendor(t *testing.T) {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skip("no /proc/cpuinfo")
	}
	_, ebx, ecx, edx := CPUID(0, 0)
	var v []byte
	for _, r := range []uint32{ebx, edx, ecx} {
		v = append(v, byte(r), byte(r>>8), byte(r>>16), byte(r>>24))
	}
	require.Contains(t, string(b), "vendor_id\t: "+string(v)+"\n")
	require.GreaterOrEqual(t, MaxExtendedLeaf(), uint32(0x80000000), "every x86-64 CPU has extended leaves")
}
