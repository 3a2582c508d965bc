//go:build amd64 || arm64

package record

import "unsafe"

// CopyBlocks and CopyShort copy a payload of at most 64 bytes to dst
// (8-byte aligned ring memory) with no call: from 16 bytes on as two or
// four 16-byte moves, the first and last blocks overlapping the middle ones
// unless the length is a multiple of 16 (one vector load and store each;
// larger block moves compile to calls of memmove), shorter payloads byte by
// byte. The rings' fast paths must make no call before their release
// store, or the compiler spills their live registers to the stack, stores
// that queue behind the producer's stores to contended ring lines (see
// docs/ringbuf.md, "Fast paths"). They are two functions, chosen by the
// caller on len(src) < 16, because one function with both is too large for
// the compiler to inline; TestFastPathsInlineTheCopy (here, for
// PublishRecord) and ringbuf's TestWriteFastPathsInlineTheCopy (for
// OneToOne.Write) check that the callers inline them. src may be unaligned: these architectures load unaligned
// words.

// CopyBlocks copies 16 to 64 bytes: [0,16) and [n-16,n) cover up to 32
// bytes; [16,32) and [n-32,n-16) add the rest up to 64.
func CopyBlocks(dst unsafe.Pointer, src []byte) {
	n := len(src)
	s := unsafe.Pointer(unsafe.SliceData(src))
	*(*[16]byte)(dst) = *(*[16]byte)(s)
	*(*[16]byte)(unsafe.Add(dst, n-16)) = *(*[16]byte)(unsafe.Add(s, n-16))
	if n > 32 {
		*(*[16]byte)(unsafe.Add(dst, 16)) = *(*[16]byte)(unsafe.Add(s, 16))
		*(*[16]byte)(unsafe.Add(dst, n-32)) = *(*[16]byte)(unsafe.Add(s, n-32))
	}
}

// CopyShort copies fewer than 16 bytes.
func CopyShort(dst unsafe.Pointer, src []byte) {
	for i := range src {
		*(*byte)(unsafe.Add(dst, i)) = src[i]
	}
}
