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
			for _, n := range []int{-1, 0, 1, 72, BlockSize, 1 << 30} {
				WriteLines(p, n)
			}
		}
	}
	Disabled = false
}

// TestDetectsPrefetchW compares the CPUID check with what Linux reports:
// the flag 3dnowprefetch is the same CPUID bit.
func TestDetectsPrefetchW(t *testing.T) {
	flags := cpuFlags(t)
	require.Equal(t, contains(flags, "3dnowprefetch"), prefetchW(), "CPUID and /proc/cpuinfo disagree on PREFETCHW")
}

// cpuFlags returns the flags line of /proc/cpuinfo, or skips the test.
func cpuFlags(t *testing.T) []string {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		t.Skip("amd64 instructions")
	}
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skip("no /proc/cpuinfo")
	}
	for _, line := range strings.Split(string(info), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			return strings.Fields(v)
		}
	}
	t.Skip("no flags line in /proc/cpuinfo")
	return nil
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
		Demote(p, BlockSize/64)
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

// TestDemoteChangesNothing: a demotion moves lines between caches, never
// their contents, with demotion on and off.
func TestDemoteChangesNothing(t *testing.T) {
	buf := make([]byte, 5*BlockSize)
	start := BlockSize - int(uintptr(unsafe.Pointer(&buf[0]))%BlockSize) // the first aligned block
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	want := append([]byte(nil), buf...)
	for _, disabled := range []bool{false, true} {
		NoDemote = disabled
		for b := start; b+BlockSize <= len(buf); b += BlockSize {
			Demote(unsafe.Pointer(&buf[b]), BlockSize/64)
		}
		Demote(unsafe.Pointer(&buf[start]), 0)
		Demote(unsafe.Pointer(&buf[start]), -1)
	}
	NoDemote = false
	require.Equal(t, want, buf)
}

// TestDetectsCLDEMOTE compares the CPUID check with /proc/cpuinfo's flag.
func TestDetectsCLDEMOTE(t *testing.T) {
	flags := cpuFlags(t)
	require.Equal(t, contains(flags, "cldemote"), cldemote(), "CPUID and /proc/cpuinfo disagree on CLDEMOTE")
}

// BenchmarkDemote measures a block that is dirty in this core's cache each
// time: the store that dirties it, then the demotion, whose cost includes
// writing the lines back to the shared cache (and the next iteration's
// stores fetching them again). BenchmarkDirty is the stores alone.
func BenchmarkDemote(b *testing.B) {
	p, blk := alignedBlock()
	b.ReportAllocs()
	for b.Loop() {
		clear(blk)
		Demote(p, BlockSize/64)
	}
}

func BenchmarkDirty(b *testing.B) {
	_, blk := alignedBlock()
	b.ReportAllocs()
	for b.Loop() {
		clear(blk)
	}
}

// alignedBlock returns a BlockSize-aligned block of new memory.
func alignedBlock() (unsafe.Pointer, []byte) {
	buf := make([]byte, 2*BlockSize)
	p := unsafe.Pointer(&buf[BlockSize-int(uintptr(unsafe.Pointer(&buf[0]))%BlockSize)])
	return p, unsafe.Slice((*byte)(p), BlockSize)
}
