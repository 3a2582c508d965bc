//go:build !amd64 || race

package ringbuf

import (
	"sync/atomic"
	"unsafe"

	"github.com/dutyrt/duty/internal/atomicbuf"
)

// publishRecord writes a many-to-one record into space claimed at rec: the
// claim marker (negated record length and type), the payload, the record
// length (the release that publishes them), then the new tail guess. See
// publish_fast.go for amd64.
func publishRecord(rec unsafe.Pointer, marker int64, src []byte, length int32, hint *atomic.Int64, next int64) {
	atomicbuf.StoreRelease64((*atomic.Int64)(rec), marker)
	if dst := unsafe.Add(rec, HeaderLength); len(src) < 16 {
		copyShort(dst, src)
	} else {
		copyBlocks(dst, src)
	}
	atomicbuf.StoreRelease32((*atomic.Int32)(rec), length)
	atomicbuf.StoreRelease64(hint, next)
}
