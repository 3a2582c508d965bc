package counters

import (
	"encoding/binary"

	"github.com/dutyrt/duty/internal/atomicbuf"
)

// Keys and labels are copied in and out of the metadata region as 4-byte
// atomic words (the label starts at offset 132, 4- but not 8-aligned). Every
// access to shared memory is then a sync/atomic operation: a reader that
// copies a label while the manager rewrites it (a slot reused while a slow
// reader looks at its old incarnation) gets a mix of old and new words, never
// a data race, and detects the mix by re-reading the registration id and
// state afterwards (see Reader). Stores use atomicbuf.StoreRelease32: a plain
// MOV on amd64 (x86-TSO keeps them in program order, before the release
// store of the label length and of the state that publish them), a
// sequentially consistent store elsewhere and under -race.

// storeWords writes src at off (4-aligned) as ceil(len(src)/4) words, the
// last one zero-padded, then zero words up to width bytes (a multiple of 4;
// width <= len(src) writes no padding words).
func storeWords[S ~string | ~[]byte](b atomicbuf.Buffer, off int, src S, width int) {
	i := 0
	for ; i+4 <= len(src); i += 4 {
		w := uint32(src[i]) | uint32(src[i+1])<<8 | uint32(src[i+2])<<16 | uint32(src[i+3])<<24
		atomicbuf.StoreRelease32(b.Int32At(off+i), int32(w))
	}
	if i < len(src) {
		var w uint32
		for j := 0; i+j < len(src); j++ {
			w |= uint32(src[i+j]) << (8 * j)
		}
		atomicbuf.StoreRelease32(b.Int32At(off+i), int32(w))
		i += 4
	}
	for ; i < width; i += 4 {
		atomicbuf.StoreRelease32(b.Int32At(off+i), 0)
	}
}

// loadWords fills dst with the bytes at off (4-aligned), loading
// ceil(len(dst)/4) words. The caller guarantees they lie inside b.
func loadWords(b atomicbuf.Buffer, off int, dst []byte) {
	i := 0
	for ; i+4 <= len(dst); i += 4 {
		binary.LittleEndian.PutUint32(dst[i:], uint32(b.Int32At(off+i).Load()))
	}
	if i < len(dst) {
		w := uint32(b.Int32At(off + i).Load())
		for j := 0; i+j < len(dst); j++ {
			dst[i+j] = byte(w >> (8 * j))
		}
	}
}

// truncateLabel cuts label to at most maxLabelLength bytes without splitting
// a UTF-8 sequence (continuation bytes are 10xxxxxx).
func truncateLabel(label string) string {
	if len(label) <= maxLabelLength {
		return label
	}
	n := maxLabelLength
	for n > maxLabelLength-3 && label[n]&0xC0 == 0x80 {
		n--
	}
	return label[:n]
}
