//go:build !amd64 || race

package atomicbuf

import "sync/atomic"

// FastRelease reports whether the StoreRelease functions use the plain-MOV
// fast path.
const FastRelease = false

func storeRelease64(p *atomic.Int64, v int64) { p.Store(v) }
func storeRelease32(p *atomic.Int32, v int32) { p.Store(v) }
func storeRelease64Pair(p1 *atomic.Int64, v1 int64, p2 *atomic.Int64, v2 int64) {
	p1.Store(v1)
	p2.Store(v2)
}
func storeRelease64Triple(p1 *atomic.Int64, v1 int64, p2 *atomic.Int64, v2 int64, p3 *atomic.Int64, v3 int64) {
	p1.Store(v1)
	p2.Store(v2)
	p3.Store(v3)
}

// The ordered stores: the store, then a load of the same word (see
// StoreOrdered64 for why that orders every later access after the store).
func storeOrdered64(p *atomic.Int64, v int64) {
	p.Store(v)
	p.Load()
}

func storeOrdered32(p *atomic.Int32, v int32) {
	p.Store(v)
	p.Load()
}

func storeOrdered64Pair(p1 *atomic.Int64, v1 int64, p2 *atomic.Int64, v2 int64) {
	p1.Store(v1)
	p1.Load()
	p2.Store(v2)
}
