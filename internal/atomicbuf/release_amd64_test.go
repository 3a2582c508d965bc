//go:build duty_codegen && amd64 && !race

package atomicbuf

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/gcout"
)

// TestReleaseStoresCompileToMOV holds the fast path to its contract: each
// release-store function must compile to its plain MOVs to memory, in
// source order, and a RET: no frame, no other instruction. The functions are
// Go (see release_amd64.go), so this test is what stands between a future
// compiler and a silent loss of ordering. It reads the compiler's own
// listing of this package (go build -gcflags=-S), built with the default
// flags.
func TestReleaseStoresCompileToMOV(t *testing.T) {
	listing := gcout.Build(t, "-S")
	// Go's internal ABI passes the arguments in AX, BX, CX, DI, SI, R8.
	want := map[string][]string{
		"storeRel64":       {"MOVQ BX, (AX)", "RET"},
		"storeRel32":       {"MOVL BX, (AX)", "RET"},
		"storeRel64Pair":   {"MOVQ BX, (AX)", "MOVQ DI, (CX)", "RET"},
		"storeRel64Triple": {"MOVQ BX, (AX)", "MOVQ DI, (CX)", "MOVQ R8, (SI)", "RET"},
	}
	for name, instrs := range want {
		require.Equal(t, instrs, gcout.Instructions(listing, "/internal/atomicbuf."+name), "compiler listing:\n%s", listing)
	}
}
