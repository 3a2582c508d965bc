//go:build amd64 && !race

package atomicbuf

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReleaseStoresCompileToMOV holds the fast path to its contract: each
// release-store function must compile to its plain MOVs to memory, in
// source order, and a RET: no frame, no other instruction. The functions are
// Go (see release_amd64.go), so this test is what stands between a future
// compiler and a silent loss of ordering. It reads the compiler's own
// listing of this package (go build -gcflags=-S), built with the default
// flags.
func TestReleaseStoresCompileToMOV(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	out, err := exec.Command(goTool, "build", "-gcflags=-S", "-o", os.DevNull, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	listing := string(out)

	// Go's internal ABI passes the arguments in AX, BX, CX, DI, SI, R8.
	want := map[string][]string{
		"storeRel64":       {"MOVQ BX, (AX)", "RET"},
		"storeRel32":       {"MOVL BX, (AX)", "RET"},
		"storeRel64Pair":   {"MOVQ BX, (AX)", "MOVQ DI, (CX)", "RET"},
		"storeRel64Triple": {"MOVQ BX, (AX)", "MOVQ DI, (CX)", "MOVQ R8, (SI)", "RET"},
	}
	for name, instrs := range want {
		require.Equal(t, instrs, instructions(listing, name), "compiler listing:\n%s", listing)
	}
}

// listingRE matches an instruction line of the compiler's -S listing:
// "\t0x0003 00003 (/path/file.go:53)\tMOVQ\tDI, (CX)".
var listingRE = regexp.MustCompile(`^\t0x[0-9a-f]+ \d+ \([^)]*\)\t(\S+)\t?(.*)$`)

// instructions returns the machine instructions of function name in the
// listing, pseudo-instructions (TEXT, FUNCDATA, PCDATA) left out.
func instructions(listing, name string) []string {
	header := "/internal/atomicbuf." + name + " STEXT"
	var instrs []string
	in := false
	for _, line := range strings.Split(listing, "\n") {
		if !strings.HasPrefix(line, "\t") {
			in = strings.Contains(line, header)
			continue
		}
		m := listingRE.FindStringSubmatch(line)
		if !in || m == nil {
			continue
		}
		switch m[1] {
		case "TEXT", "FUNCDATA", "PCDATA":
			continue
		}
		instrs = append(instrs, strings.TrimSpace(m[1]+" "+m[2]))
	}
	return instrs
}
