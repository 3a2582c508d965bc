package gcout

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// Build compiles the package in the current directory (a test's own) with
// -gcflags=gcflags, default flags otherwise, and returns the compiler's
// output. It skips the test when the go command is not on PATH and fails it
// when the build fails.
func Build(t testing.TB, gcflags string) string {
	t.Helper()
	return BuildEnv(t, gcflags)
}

// BuildEnv is Build with env ("GOARCH=arm64", "GOARM64=v8.1", ...) added to
// the go command's environment: the compiler's output for another
// architecture, which the go command cross-compiles without any tool of
// that architecture.
func BuildEnv(t testing.TB, gcflags string, env ...string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	cmd := exec.Command(goTool, "build", "-gcflags="+gcflags, "-o", os.DevNull, ".")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v go build -gcflags=%s: %v\n%s", env, gcflags, err, out)
	}
	return string(out)
}

// listingRE matches an instruction line of the -S listing:
// "\t0x0003 00003 (/path/file.go:53)\tMOVQ\tDI, (CX)".
var listingRE = regexp.MustCompile(`^\t0x[0-9a-f]+ \d+ \([^)]*\)\t(\S+)\t?(.*)$`)

// Instructions returns the instructions of the function whose symbol ends
// in symbol ("/internal/ringfast.PublishRecord", "/internal/atomicbuf.storeRel64")
// in a -S listing, in code layout order, written "MOVQ DI, (CX)", without
// the pseudo-instructions TEXT, FUNCDATA and PCDATA. It returns nil when
// the listing has no such function.
func Instructions(listing, symbol string) []string {
	header := symbol + " STEXT"
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
