//go:build duty_codegen

package record

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/gcout"
)

// TestPublishRecordOrderOnArm64 holds PublishRecord (publish_other.go) to
// the order Unblock's zero-gap scan needs, in the compiler's own listing
// for GOARCH=arm64 (cross-compiled, so it runs on any host), with and
// without LSE atomics (GOARM64 v8.0, the default, and v8.1): the first
// store to memory is the claim marker, a store-release (STLR) at the
// record immediately followed by a load-acquire (LDAR) of the record, with
// no branch before them, so that every payload store, wherever the copy
// puts it in the listing, executes after both and cannot become visible
// before the marker; the payload is stored (in line, no call); the last
// two stores before the return are the 4-byte record length at the record
// and the tail guess elsewhere. (A release store alone would let the
// payload's plain stores pass the marker: see atomicbuf.StoreOrdered64.)
func TestPublishRecordOrderOnArm64(t *testing.T) {
	for _, level := range []string{"v8.0", "v8.1"} {
		t.Run(level, func(t *testing.T) {
			listing := gcout.BuildEnv(t, "-S", "GOARCH=arm64", "GOARM64="+level)
			instrs := gcout.Arm64Ops(gcout.Instructions(listing, "/internal/record.PublishRecord"))
			require.NotEmpty(t, instrs, "PublishRecord not found in the listing")

			marker := -1
			var stores []string // every store to memory, in listing order
			ret := -1
			for i, in := range instrs {
				require.False(t, strings.HasPrefix(in, "CALL"), "PublishRecord calls: %s", in)
				if _, ok := gcout.Arm64Store(in); ok {
					if marker < 0 {
						marker = i
					}
					stores = append(stores, in)
				}
				if in == "RET (R30)" && ret < 0 {
					ret = i
				}
				if marker < 0 {
					require.False(t, gcout.Arm64Branch(in), "a branch before the marker: %s (%v)", in, instrs)
				}
			}
			require.GreaterOrEqual(t, marker, 0, "no store: %v", instrs)
			rec, _ := gcout.Arm64Store(instrs[marker])
			require.True(t, strings.HasPrefix(instrs[marker], "STLR "), "the first store %q is not the marker's store-release", instrs[marker])
			require.Less(t, marker+1, len(instrs))
			require.True(t, strings.HasPrefix(instrs[marker+1], "LDAR "+rec+", "),
				"the marker %q must be followed at once by a load-acquire of %s, not %q", instrs[marker], rec, instrs[marker+1])

			var beforeRet []string
			for _, in := range instrs[marker+2 : ret] {
				if _, ok := gcout.Arm64Store(in); ok {
					beforeRet = append(beforeRet, in)
				}
			}
			require.GreaterOrEqual(t, len(beforeRet), 3, "payload, length and tail guess stores after the marker: %v", beforeRet)
			length, hint := beforeRet[len(beforeRet)-2], beforeRet[len(beforeRet)-1]
			require.True(t, strings.HasPrefix(length, "STLRW ") && strings.HasSuffix(length, ", "+rec),
				"the 4-byte length must be stored at the record, second to last (stores %v)", stores)
			hintDst, _ := gcout.Arm64Store(hint)
			require.True(t, strings.HasPrefix(hint, "STLR ") && hintDst != rec,
				"the tail guess must be stored last, elsewhere (stores %v)", stores)
		})
	}
}
