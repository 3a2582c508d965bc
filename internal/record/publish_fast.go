//go:build amd64 && !race

package record

import (
	"sync/atomic"
	"unsafe"
)

// PublishRecord writes a many-to-one record into space claimed at rec, in
// one call so that the producer's fast path spills nothing (docs/ringbuf.md,
// "Fast paths"): the claim marker (negated record length and the type, one
// 8-byte store, the first store into the claim, which Unblock relies on),
// the payload, the record length (a 4-byte store: the release that
// publishes type and payload), then the new tail guess.
//
// The stores are plain MOVs, as in internal/atomicbuf's release stores:
// x86-TSO makes them visible in program order, the function is opaque to
// its callers (go:noinline), and inside it Go emits stores to memory in
// source order. The length store covers only half of the marker's word, so
// the compiler cannot drop the marker as a dead store.
// TestPublishRecordStoreOrder checks the compiled code.
//
//go:noinline
func PublishRecord(rec unsafe.Pointer, marker int64, src []byte, length int32, hint *atomic.Int64, next int64) {
	*(*int64)(rec) = marker
	if dst := unsafe.Add(rec, HeaderLength); len(src) < 16 {
		CopyShort(dst, src)
	} else {
		CopyBlocks(dst, src)
	}
	*(*int32)(rec) = length
	*(*int64)(unsafe.Pointer(hint)) = next
}
