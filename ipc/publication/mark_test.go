//go:build duty_codegen && amd64 && !race

package publication

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/gcout"
)

// TestMarkIsOneStore holds Publication.mark to one 8-byte store of the
// claim marker, in the compiler's own listing (go build -gcflags=-S):
// exactly one call to atomicbuf's 8-byte release store (whose body is one
// MOVQ, checked in package atomicbuf) and no other store to memory. Length
// and type in two stores would let an unblock turn the claim into padding
// between them, and the late type store turn it back into a record
// (TestUnblockedClaimStaysPadding checks the outcome, this test the cause).
func TestMarkIsOneStore(t *testing.T) {
	instrs := gcout.Instructions(gcout.Build(t, "-S"), "/publication.(*Publication).mark")
	require.NotEmpty(t, instrs, "Publication.mark not found in the listing")

	var calls, stores []string
	for _, in := range instrs {
		op, args, _ := strings.Cut(in, " ")
		switch {
		case op == "CALL" && !strings.Contains(args, "runtime.morestack"):
			calls = append(calls, args)
		case strings.HasPrefix(op, "MOV") || strings.HasPrefix(op, "XCHG") || strings.HasPrefix(op, "LOCK"):
			_, dst, ok := strings.Cut(args, ", ")
			if ok && strings.Contains(dst, "(") && !strings.Contains(dst, "(SP)") && !strings.Contains(dst, "(FP)") {
				stores = append(stores, in)
			}
		}
	}
	require.Equal(t, []string{"github.com/dutyrt/duty/internal/atomicbuf.storeRel64(SB)"}, calls,
		"mark must make exactly one 8-byte release store (instructions: %v)", instrs)
	require.Empty(t, stores, "mark must store nothing but through that call (instructions: %v)", instrs)
}
