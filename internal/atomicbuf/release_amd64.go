//go:build amd64 && !race

package atomicbuf

import (
	"sync/atomic"
	"unsafe"
)

// FastRelease reports whether the StoreRelease functions use the plain-MOV
// fast path.
const FastRelease = true

// The fast path is a set of leaf functions that the compiler may not inline,
// each a plain aligned MOV (or a few, in program order). Why this is a
// release store:
//
//   - Hardware: under x86-TSO stores become visible in program order, and an
//     aligned 4- or 8-byte MOV is single-copy atomic.
//   - Compiler: a call the compiler cannot see through is a barrier for it:
//     every store the caller made before the call is emitted before it (the
//     callee might read that memory), and inside a body that is nothing but
//     stores through distinct pointers Go emits them in source order (they
//     are chained through its memory state and any two may alias).
//
// TestReleaseStoresCompileToMOV disassembles these functions in the test
// binary and fails unless each is exactly its MOVs and a RET, so a compiler
// that ever generated something else would be caught by CI.
//
// They are Go rather than assembly on purpose: Go calls an assembly function
// with the stack-based ABI0 (every argument stored to the stack, the zero
// and g registers restored after the call), while these take their
// arguments in registers. On a producer whose stores to ring lines are
// waiting for the consumer's core, every extra store fills the store
// buffer, and each ABI0 call adds several (docs/memory-ordering.md).

//go:noinline
func storeRel64(p *int64, v int64) { *p = v }

//go:noinline
func storeRel32(p *int32, v int32) { *p = v }

//go:noinline
func storeRel64Pair(p1 *int64, v1 int64, p2 *int64, v2 int64) {
	*p1 = v1
	*p2 = v2
}

//go:noinline
func storeRel64Triple(p1 *int64, v1 int64, p2 *int64, v2 int64, p3 *int64, v3 int64) {
	*p1 = v1
	*p2 = v2
	*p3 = v3
}

func storeRelease64(p *atomic.Int64, v int64) { storeRel64((*int64)(unsafe.Pointer(p)), v) }
func storeRelease32(p *atomic.Int32, v int32) { storeRel32((*int32)(unsafe.Pointer(p)), v) }
func storeRelease64Pair(p1 *atomic.Int64, v1 int64, p2 *atomic.Int64, v2 int64) {
	storeRel64Pair((*int64)(unsafe.Pointer(p1)), v1, (*int64)(unsafe.Pointer(p2)), v2)
}
func storeRelease64Triple(p1 *atomic.Int64, v1 int64, p2 *atomic.Int64, v2 int64, p3 *atomic.Int64, v3 int64) {
	storeRel64Triple((*int64)(unsafe.Pointer(p1)), v1, (*int64)(unsafe.Pointer(p2)), v2, (*int64)(unsafe.Pointer(p3)), v3)
}

// The ordered stores are the release stores here: x86-TSO makes stores
// visible in program order, so a later store never passes the MOV. They
// call the same functions, so their callers compile as with StoreRelease.
func storeOrdered64(p *atomic.Int64, v int64) { storeRel64((*int64)(unsafe.Pointer(p)), v) }
func storeOrdered32(p *atomic.Int32, v int32) { storeRel32((*int32)(unsafe.Pointer(p)), v) }
func storeOrdered64Pair(p1 *atomic.Int64, v1 int64, p2 *atomic.Int64, v2 int64) {
	storeRel64Pair((*int64)(unsafe.Pointer(p1)), v1, (*int64)(unsafe.Pointer(p2)), v2)
}
