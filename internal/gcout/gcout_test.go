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
