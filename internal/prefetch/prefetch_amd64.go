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

// The assembly functions take their argument on the stack (ABI0): one
// store, in a call the rings make once per BlockSize bytes.

//go:noescape
func writeBlock(p unsafe.Pointer)

//go:noescape
func readBlock(p unsafe.Pointer)

func write(p unsafe.Pointer) { writeBlock(p) }
func read(p unsafe.Pointer)  { readBlock(p) }

// prefetchW reports what writeBlock does, for the tests.
func prefetchW() bool { return hasPrefetchW }
