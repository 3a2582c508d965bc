package prefetch

import (
	"unsafe"

	"github.com/dutyrt/duty/internal/x86"
)

// hasPrefetchW: CPUID leaf 0x80000001, ECX bit 8 (Linux shows it as
// 3dnowprefetch). Intel has PREFETCHW since Broadwell, AMD since K6-2.
// Read by writeBlock.
var hasPrefetchW = func() bool {
	if x86.MaxExtendedLeaf() < 0x80000001 {
		return false
	}
	_, _, ecx, _ := x86.CPUID(0x80000001, 0)
	return ecx&(1<<8) != 0
}()

// hasCLDEMOTE: CPUID leaf 7, subleaf 0, ECX bit 25 (Linux: cldemote).
// Intel since Tremont and Sapphire Rapids. Read by demoteLines.
var hasCLDEMOTE = func() bool {
	if max, _, _, _ := x86.CPUID(0, 0); max < 7 {
		return false
	}
	_, _, ecx, _ := x86.CPUID(7, 0)
	return ecx&(1<<25) != 0
}()

// The assembly functions take their arguments on the stack (ABI0): a
// store or two, in a call the rings make once per BlockSize bytes (Write,
// Read) or once per many-to-one release (Demote).

//go:noescape
func writeBlock(p unsafe.Pointer)

//go:noescape
func readBlock(p unsafe.Pointer)

//go:noescape
func demoteLines(p unsafe.Pointer, n int)

//go:noescape
func writeRange(p unsafe.Pointer, n int)

func write(p unsafe.Pointer)             { writeBlock(p) }
func read(p unsafe.Pointer)              { readBlock(p) }
func demote(p unsafe.Pointer, n int)     { demoteLines(p, n) }
func writeLines(p unsafe.Pointer, n int) { writeRange(p, n) }

// prefetchW reports what writeBlock does, for the tests.
func prefetchW() bool { return hasPrefetchW }

// cldemote reports what demoteLines does, for the tests.
func cldemote() bool { return hasCLDEMOTE }
