//go:build duty_codegen

package ringbuf

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/gcout"
)

// TestClaimMarkersOrderedOnArm64 holds the claim markers this package
// stores itself to an ordered store on arm64, in the compiler's own
// listing for GOARCH=arm64 (cross-compiled, so it runs on any host), with
// and without LSE atomics (GOARM64 v8.0, the default, and v8.1): a
// store-release immediately followed by a load-acquire of the same word,
// after which no store of the claim can become visible before the marker
// (atomicbuf.StoreOrdered64; docs/memory-ordering.md, "Ring buffers", the claim marker).
// That is TryClaim and TryClaimRecords, which compose the record core's
// fast claim, general claim and marker in their own frame; every other
// claim marks in the record core, whose TestClaimMarkersOrderedOnArm64
// checks them.
//
// The fast path (marker and tail guess in one StoreOrdered64Pair) and the
// general path (the core's Mark, inlined, after the claim): two ordered
// markers; every other release store is the tail guess stored right after
// one; no plain store (the payload is the caller's, after the return).
func TestClaimMarkersOrderedOnArm64(t *testing.T) {
	for _, level := range []string{"v8.0", "v8.1"} {
		listing := gcout.BuildEnv(t, "-S", "GOARCH=arm64", "GOARM64="+level)
		for _, name := range []string{"(*ManyToOne).TryClaim", "(*ManyToOne).TryClaimRecords"} {
			t.Run(level+"/"+name, func(t *testing.T) {
				claimMarkersOrdered(t, name, listing)
			})
		}
	}
}

// claimMarkersOrdered checks the claim name in an arm64 listing, as
// TestClaimMarkersOrderedOnArm64 describes.
func claimMarkersOrdered(t *testing.T, name, listing string) {
	t.Helper()
	instrs := gcout.Arm64Ops(gcout.Instructions(listing, "/ringbuf."+name))
	require.NotEmpty(t, instrs, "%s not found in the listing", name)
	markers := 0
	for _, i := range gcout.Arm64StoreIndexes(instrs) {
		in := instrs[i]
		require.True(t, strings.HasPrefix(in, "STLR"), "%s: a plain store %q: %v", name, in, instrs)
		switch {
		case gcout.Arm64OrderedAt(instrs, i):
			markers++
		case i >= 2 && gcout.Arm64OrderedAt(instrs, i-2):
		default:
			require.Failf(t, "a release store that is neither an ordered marker nor the tail guess after one",
				"%s: %q: %v", name, in, instrs)
		}
	}
	require.Equal(t, 2, markers, "%s: an ordered marker on the fast and on the general path: %v", name, instrs)
}
