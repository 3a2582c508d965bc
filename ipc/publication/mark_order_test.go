//go:build duty_codegen

package publication

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/gcout"
)

// TestMarkOrderedOnArm64 holds Publication.mark to an ordered store on
// arm64, in the compiler's listing for GOARCH=arm64 (cross-compiled, so it
// runs on any host), with and without LSE atomics: one store-release (STLR)
// of the marker immediately followed by a load-acquire (LDAR) of the same
// word, and no other store. A release store alone lets the payload stores
// that follow the marker pass it, and the zero-gap unblock could then take
// a payload word for the next record (docs/memory-ordering.md, "Ring
// buffers", the claim marker; atomicbuf.StoreOrdered64).
func TestMarkOrderedOnArm64(t *testing.T) {
	for _, level := range []string{"v8.0", "v8.1"} {
		listing := gcout.BuildEnv(t, "-S", "GOARCH=arm64", "GOARM64="+level)
		instrs := gcout.Arm64Ops(gcout.Instructions(listing, "/publication.(*Publication).mark"))
		require.NotEmpty(t, instrs, "%s: Publication.mark not found in the listing", level)
		var stores []int
		for i, in := range instrs {
			if _, ok := gcout.Arm64Store(in); ok {
				stores = append(stores, i)
			}
		}
		require.Len(t, stores, 1, "%s: one store, the marker: %v", level, instrs)
		i := stores[0]
		dst, _ := gcout.Arm64Store(instrs[i])
		require.True(t, strings.HasPrefix(instrs[i], "STLR ") && i+1 < len(instrs) && strings.HasPrefix(instrs[i+1], "LDAR "+dst+", "),
			"%s: the marker is not STLR then LDAR of the same word: %v", level, instrs)
	}
}
