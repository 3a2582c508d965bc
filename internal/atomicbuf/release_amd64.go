//go:build amd64 && !race

package atomicbuf

import (
	"sync/atomic"
	"unsafe"
)

// FastRelease reports whether StoreRelease64/32 use the plain-MOV fast path.
const FastRelease = true

//go:noescape
func storeRel64(p *int64, v int64)

//go:noescape
func storeRel32(p *int32, v int32)

//go:noescape
func storeRel64Pair(p1 *int64, v1 int64, p2 *int64, v2 int64)

func storeRelease64(p *atomic.Int64, v int64) { storeRel64((*int64)(unsafe.Pointer(p)), v) }
func storeRelease32(p *atomic.Int32, v int32) { storeRel32((*int32)(unsafe.Pointer(p)), v) }
func storeRelease64Pair(p1 *atomic.Int64, v1 int64, p2 *atomic.Int64, v2 int64) {
	storeRel64Pair((*int64)(unsafe.Pointer(p1)), v1, (*int64)(unsafe.Pointer(p2)), v2)
}
