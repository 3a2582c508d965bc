package gcout

import (
	"testing"

	"github.com/stretchr/testify/require"
)

const listing = `github.com/x/p.f STEXT nosplit size=3 args=0x10 locals=0x0 funcid=0x0 align=0x0
	0x0000 00000 (/src/p/f.go:3)	TEXT	github.com/x/p.f(SB), NOSPLIT|NOFRAME|ABIInternal, $0-16
	0x0000 00000 (/src/p/f.go:3)	FUNCDATA	$0, gclocals·x(SB)
	0x0000 00000 (/src/p/f.go:3)	PCDATA	$3, $1
	0x0000 00000 (/src/p/f.go:3)	MOVQ	BX, (AX)
	0x0003 00003 (/src/p/f.go:3)	RET
	0x0000 48 89 18 c3                                      H...
github.com/x/p.g STEXT nosplit size=1 args=0x0 locals=0x0 funcid=0x0 align=0x0
	0x0000 00000 (/src/p/f.go:5)	RET
`

func TestInstructions(t *testing.T) {
	require.Equal(t, []string{"MOVQ BX, (AX)", "RET"}, Instructions(listing, "/p.f"))
	require.Equal(t, []string{"RET"}, Instructions(listing, "/p.g"))
	require.Nil(t, Instructions(listing, "/p.h"))
}

func TestBuildReadsThisPackage(t *testing.T) {
	out := Build(t, "-S")
	require.NotEmpty(t, Instructions(out, "/internal/gcout.Instructions"))
}

func TestBuildEnvCrossCompiles(t *testing.T) {
	out := BuildEnv(t, "-S", "GOARCH=arm64")
	require.Contains(t, Instructions(out, "/internal/gcout.Instructions"), "RET (R30)",
		"an arm64 listing returns through the link register")
}

func TestArm64Helpers(t *testing.T) {
	require.Equal(t, []string{"STLR R1, (R0)", "RET (R30)"}, Arm64Ops([]string{"HINT $0", "STLR R1, (R0)", "NOP", "RET (R30)"}))
	for in, want := range map[string]string{
		"STLR R1, (R0)":        "(R0)",
		"MOVD R1, 8(R2)":       "8(R2)",
		"STP (R1, R8), 24(R0)": "24(R0)",
		"MOVB R8, (R4)(R1)":    "(R4)(R1)",
		"MOVD.W R30, -16(RSP)": "",
		"MOVD R2, x.s+16(FP)":  "",
		"MOVD (R2), R1":        "",
		"LDP (R2), (R1, R8)":   "",
		"LDAR (R0), R1":        "",
		"MOVD R0, p.r-8(SP)":   "",
		"FMOVQ F0, 16(R3)":     "16(R3)",
		"STLRW R5, (R0)":       "(R0)",
		"MOVD $5, R0":          "",
		"ADD $8, R0, R4":       "",
	} {
		dst, ok := Arm64Store(in)
		require.Equal(t, want, dst, in)
		require.Equal(t, want != "", ok, in)
	}
	for _, in := range []string{"JMP 164", "BGE 48", "CBNZ R27, 32", "TBZ $0, R3, 32", "RET (R30)", "CALL runtime.memmove(SB)"} {
		require.True(t, Arm64Branch(in), in)
	}
	for _, in := range []string{"BIC R1, R2, R3", "BFI $1, R2, $3, R4", "STLR R1, (R0)"} {
		require.False(t, Arm64Branch(in), in)
	}

	instrs := []string{"MOVD R1, 8(R2)", "STLR R3, (R0)", "LDAR (R0), R4", "STLRW R5, (R6)", "LDARW (R6), R7",
		"STLR R3, (R0)", "LDAR (R1), R4", "STLRW R5, (R6)", "MOVD (R2), R1"}
	require.Equal(t, []int{0, 1, 3, 5, 7}, Arm64StoreIndexes(instrs))
	for i, want := range []bool{false, true, false, true, false, false, false, false, false} {
		require.Equal(t, want, Arm64OrderedAt(instrs, i), "%d: %s", i, instrs[i])
	}
}
