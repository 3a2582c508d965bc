//go:build !amd64 && !arm64

package ringbuf

import "unsafe"

// copyPayload copies src, at most 64 bytes, to dst. Architectures that may
// fault on unaligned loads copy with the runtime's memmove.
func copyPayload(dst unsafe.Pointer, src []byte) {
	copy(unsafe.Slice((*byte)(dst), len(src)), src)
}
