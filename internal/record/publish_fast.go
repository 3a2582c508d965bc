//go:build amd64 && !race

package record

import (
	"sync/atomic"
	"unsafe"
)

// PublishRecord writes a many-to-one record into space claimed at rec, in
// one call so that the producer's fast path spills nothing: the claim
// marker (negated record length and the type, one 8-byte store, first),
// the payload, the record length (a 4-byte store: the release that
// publishes type and payload), then the new tail guess. The stores are
// plain MOVs in that order: x86-TSO keeps it, the function is opaque to
// its callers and Go emits its stores in source order
// (TestPublishRecordStoreOrder checks the compiled code).
//
//go:noinline
func PublishRecord(rec unsafe.Pointer, marker int64, src []byte, length int32, hint *atomic.Int64, next int64) {
	*(*int64)(rec) = marker
	if dst := unsafe.Add(rec, HeaderLength); len(src) < 16 {
		CopyShort(dst, src)
	} else {
		CopyBlocks(dst, src)
	}
	*(*int32)(rec) = length // half the marker's word: the marker is no dead store
	*(*int64)(unsafe.Pointer(hint)) = next
}
