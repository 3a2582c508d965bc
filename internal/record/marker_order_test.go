//go:build duty_codegen

package record

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/gcout"
)

// TestClaimMarkersOrderedOnArm64 holds every claim marker of the core to
// an ordered store on arm64, in the compiler's own listing for
// GOARCH=arm64 (cross-compiled, so it runs on any host), with and without
// LSE atomics (GOARM64 v8.0, the default, and v8.1): a store-release
// (STLR, or STLRW for a batch's 4-byte marker) immediately followed by a
// load-acquire (LDAR, LDARW) of the same word, after which no store of the
// claim can become visible before the marker (atomicbuf.StoreOrdered64).
// A release store alone would let them pass it, and Unblock's zero-gap
// scan could take a payload word for the next record and pad into the
// middle of a live claim (docs/memory-ordering.md, "Ring buffers", the claim marker). Write's
// fast path marks in PublishRecord (TestPublishRecordOrderOnArm64);
// ringbuf's TryClaimRecords, which composes the same pieces, is checked
// there.
func TestClaimMarkersOrderedOnArm64(t *testing.T) {
	for _, level := range []string{"v8.0", "v8.1"} {
		t.Run(level, func(t *testing.T) {
			listing := gcout.BuildEnv(t, "-S", "GOARCH=arm64", "GOARM64="+level)
			fn := func(name string) []string {
				instrs := gcout.Arm64Ops(gcout.Instructions(listing, "/internal/record."+name))
				require.NotEmpty(t, instrs, "%s not found in the listing", name)
				return instrs
			}

			// The helpers that mark: one ordered store, nothing else.
			for _, name := range []string{"(*Producer).Mark", "(*Producer).Claimed", "(*Producer).ClaimedBatch"} {
				instrs := fn(name)
				stores := gcout.Arm64StoreIndexes(instrs)
				require.Len(t, stores, 1, "%s: %v", name, instrs)
				require.True(t, gcout.Arm64OrderedAt(instrs, stores[0]), "%s: the marker is not an ordered store: %v", name, instrs)
			}

			// The general paths that mark and then write the payload (a
			// copy, a call): the marker, ordered, is the first store and
			// comes before any call.
			for _, name := range []string{"(*Producer).WriteRecord", "(*Producer).WriteBatchAt"} {
				instrs := fn(name)
				stores := gcout.Arm64StoreIndexes(instrs)
				require.NotEmpty(t, stores, name)
				require.True(t, gcout.Arm64OrderedAt(instrs, stores[0]), "%s: the first store is not an ordered marker: %v", name, instrs)
				for _, in := range instrs[:stores[0]] {
					require.False(t, strings.HasPrefix(in, "CALL"), "%s: a call before the marker: %v", name, instrs)
				}
			}

			// The claims, fast path (marker and tail guess in one
			// StoreOrdered64Pair) and general path (mark after claim): two
			// ordered markers; every other release store is the tail guess
			// stored right after one; no plain store (the payload is the
			// caller's, after the return).
			for _, name := range []string{"(*Producer).TryClaim", "(*Producer).TryClaimBatch"} {
				claimMarkersOrdered(t, name, fn(name))
			}
		})
	}
}

// claimMarkersOrdered checks the listing of a claim with a fast and a
// general path, as TestClaimMarkersOrderedOnArm64 describes.
func claimMarkersOrdered(t *testing.T, name string, instrs []string) {
	t.Helper()
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
