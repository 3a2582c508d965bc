//go:build duty_codegen

package atomicbuf

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/gcout"
)

// TestOrderedStoresOnArm64 holds the ordered stores to their contract on
// arm64, in the compiler's own listing for GOARCH=arm64 (cross-compiled, so
// it runs on any host), with and without LSE atomics (GOARM64=v8.0, the
// default, and v8.1): the store is a store-release (STLR) immediately
// followed by a load-acquire (LDAR) of the same address, which orders
// every later access after the store; the pair's second store comes after
// both.
func TestOrderedStoresOnArm64(t *testing.T) {
	for _, level := range []string{"v8.0", "v8.1"} {
		t.Run(level, func(t *testing.T) {
			listing := gcout.BuildEnv(t, "-S", "GOARCH=arm64", "GOARM64="+level)
			for name, want := range map[string][]string{
				"StoreOrdered64":     {"STLR", "LDAR", "RET"},
				"StoreOrdered32":     {"STLRW", "LDARW", "RET"},
				"StoreOrdered64Pair": {"STLR", "LDAR", "STLR", "RET"},
			} {
				instrs := gcout.Arm64Ops(gcout.Instructions(listing, "/internal/atomicbuf."+name))
				var ops []string
				for _, in := range instrs {
					op, _, _ := strings.Cut(in, " ")
					ops = append(ops, op)
				}
				require.Equal(t, want, ops, "%s: %v", name, instrs)
				_, stored, _ := strings.Cut(instrs[0], ", ")
				loaded, _, _ := strings.Cut(strings.TrimPrefix(instrs[1], ops[1]+" "), ", ")
				require.Equal(t, stored, loaded, "%s: the load-acquire reads the word just stored: %v", name, instrs)
			}
		})
	}
}

// TestOrderedStoresOnAmd64AreReleaseStores: on amd64 (without -race) the
// ordered stores compile exactly as the release stores, a call of the same
// plain-MOV function (x86-TSO already keeps later stores behind them).
func TestOrderedStoresOnAmd64AreReleaseStores(t *testing.T) {
	listing := gcout.BuildEnv(t, "-S", "GOARCH=amd64")
	for ordered, release := range map[string]string{
		"StoreOrdered64":     "StoreRelease64",
		"StoreOrdered32":     "StoreRelease32",
		"StoreOrdered64Pair": "StoreRelease64Pair",
	} {
		want := gcout.Instructions(listing, "/internal/atomicbuf."+release)
		require.NotEmpty(t, want, release)
		require.Equal(t, want, gcout.Instructions(listing, "/internal/atomicbuf."+ordered), ordered)
	}
}
