//go:build !amd64 && !arm64

package record

import "unsafe"

// CopyBlocks and CopyShort copy a payload of at most 64 bytes to dst (see
// copy_words.go). Architectures that may fault on unaligned loads copy with
// the runtime's memmove.
func CopyBlocks(dst unsafe.Pointer, src []byte) { copy(unsafe.Slice((*byte)(dst), len(src)), src) }

func CopyShort(dst unsafe.Pointer, src []byte) { copy(unsafe.Slice((*byte)(dst), len(src)), src) }
