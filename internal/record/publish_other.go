//go:build !amd64 || race

package record

import (
	"sync/atomic"
	"unsafe"

	"github.com/dutyrt/duty/internal/atomicbuf"
)

// PublishRecord writes a many-to-one record into space claimed at rec: the
// claim marker (negated record length and type), the payload, the record
// length (the release that publishes them), then the new tail guess. See
// publish_fast.go for amd64.
//
// The marker is an ordered store (atomicbuf.StoreOrdered64; on arm64 STLR
// then LDAR): the payload's plain stores cannot become visible before it,
// so Unblock's zero-gap scan never finds a payload word of this claim
// behind a zero header. A release store alone (STLR) would let them pass.
// TestPublishRecordOrderOnArm64 checks the compiled code.
func PublishRecord(rec unsafe.Pointer, marker int64, src []byte, length int32, hint *atomic.Int64, next int64) {
	atomicbuf.StoreOrdered64((*atomic.Int64)(rec), marker)
	if dst := unsafe.Add(rec, HeaderLength); len(src) < 16 {
		CopyShort(dst, src)
	} else {
		CopyBlocks(dst, src)
	}
	atomicbuf.StoreRelease32((*atomic.Int32)(rec), length)
	atomicbuf.StoreRelease64(hint, next)
}
