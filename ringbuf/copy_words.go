//go:build amd64 || arm64

package ringbuf

import "unsafe"

// copyPayload copies src, at most 64 bytes, to dst (8-byte aligned ring
// memory) by 8-byte words, in line, with no loop, no call and no bounds
// check: the stores of a record then follow each other closely, and the
// producer keeps nothing live across a call (see docs/ringbuf.md, "Fast
// paths"). src may be unaligned: these architectures load unaligned words.
func copyPayload(dst unsafe.Pointer, src []byte) {
	n := len(src)
	s := unsafe.Pointer(unsafe.SliceData(src))
	if n < 8 {
		for i := 0; i < n; i++ {
			*(*byte)(unsafe.Add(dst, i)) = *(*byte)(unsafe.Add(s, i))
		}
		return
	}
	if n&7 != 0 {
		// The last 8 bytes, overlapping the last whole word.
		*(*uint64)(unsafe.Add(dst, n-8)) = *(*uint64)(unsafe.Add(s, n-8))
	}
	switch n >> 3 {
	case 8:
		*(*uint64)(unsafe.Add(dst, 56)) = *(*uint64)(unsafe.Add(s, 56))
		fallthrough
	case 7:
		*(*uint64)(unsafe.Add(dst, 48)) = *(*uint64)(unsafe.Add(s, 48))
		fallthrough
	case 6:
		*(*uint64)(unsafe.Add(dst, 40)) = *(*uint64)(unsafe.Add(s, 40))
		fallthrough
	case 5:
		*(*uint64)(unsafe.Add(dst, 32)) = *(*uint64)(unsafe.Add(s, 32))
		fallthrough
	case 4:
		*(*uint64)(unsafe.Add(dst, 24)) = *(*uint64)(unsafe.Add(s, 24))
		fallthrough
	case 3:
		*(*uint64)(unsafe.Add(dst, 16)) = *(*uint64)(unsafe.Add(s, 16))
		fallthrough
	case 2:
		*(*uint64)(unsafe.Add(dst, 8)) = *(*uint64)(unsafe.Add(s, 8))
		fallthrough
	default:
		*(*uint64)(dst) = *(*uint64)(s)
	}
}
