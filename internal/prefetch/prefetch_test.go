package prefetch

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestNeverFaults: a prefetch is a hint the CPU drops when the address is
// not mapped, so the rings may ask for lines without checking them. Every
// call here must return, with prefetching on and off.
func TestNeverFaults(t *testing.T) {
	buf := make([]byte, 4*BlockSize)
	for _, disabled := range []bool{false, true} {
		Disabled = disabled
		for _, p := range []unsafe.Pointer{
			unsafe.Pointer(&buf[0]),
			unsafe.Pointer(&buf[len(buf)-BlockSize]),
			unsafe.Pointer(&buf[len(buf)-1]), // the block runs past the slice
			nil,                              // page 0 is never mapped
		} {
			Write(p)
			Read(p)
		}
	}
	Disabled = false
}

// TestDetectsPrefetchW compares the CPUID check with what Linux reports:
// the flag 3dnowprefetch is the same CPUID bit.
func TestDetectsPrefetchW(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("PREFETCHW is an amd64 instruction")
	}
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skip("no /proc/cpuinfo")
	}
	var flags []string
	for _, line := range strings.Split(string(info), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			flags = strings.Fields(v)
			break
		}
	}
	if flags == nil {
		t.Skip("no flags line in /proc/cpuinfo")
	}
	require.Equal(t, contains(flags, "3dnowprefetch"), prefetchW(), "CPUID and /proc/cpuinfo disagree on PREFETCHW")
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

func TestAllocatesNothing(t *testing.T) {
	buf := make([]byte, BlockSize)
	p := unsafe.Pointer(&buf[0])
	require.Zero(t, testing.AllocsPerRun(100, func() {
		Write(p)
		Read(p)
	}))
}

// BenchmarkWrite and BenchmarkRead measure one call on lines this core
// already holds: the fixed cost the rings pay once per block.
func BenchmarkWrite(b *testing.B) {
	buf := make([]byte, BlockSize)
	p := unsafe.Pointer(&buf[0])
	b.ReportAllocs()
	for b.Loop() {
		Write(p)
	}
}

func BenchmarkRead(b *testing.B) {
	buf := make([]byte, BlockSize)
	p := unsafe.Pointer(&buf[0])
	b.ReportAllocs()
	for b.Loop() {
		Read(p)
	}
}
