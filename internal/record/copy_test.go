package record

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/atomicbuf"
)

// CopyShort (under 16 bytes) and CopyBlocks (16 to 64) must copy every
// length exactly, from aligned and unaligned sources, and write nothing
// outside the payload.
func TestCopyEveryLength(t *testing.T) {
	src := make([]byte, 80)
	for i := range src {
		src[i] = byte(i*7 + 1)
	}
	for n := 0; n <= 64; n++ {
		for off := 0; off < 8; off++ {
			dst := atomicbuf.Make(96).Bytes()
			for i := range dst {
				dst[i] = 0xAA
			}
			if n < 16 {
				CopyShort(unsafe.Pointer(&dst[8]), src[off:off+n])
			} else {
				CopyBlocks(unsafe.Pointer(&dst[8]), src[off:off+n])
			}
			require.Equal(t, src[off:off+n], dst[8:8+n], "n=%d off=%d", n, off)
			require.Equal(t, bytes.Repeat([]byte{0xAA}, 8), dst[:8], "n=%d off=%d: before", n, off)
			for i := 8 + n; i < len(dst); i++ {
				require.Equal(t, byte(0xAA), dst[i], "n=%d off=%d: byte %d after", n, off, i)
			}
		}
	}
}
