package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// inlinedHelpers are small functions the timed loops call per message:
// each must be inlined wherever this package calls it.
var inlinedHelpers = []string{
	"main.putPayload", "main.putSeq", "main.seqFor", "main.(*checker).checkArray",
	"mailbox.(*Message).TypeID", "mailbox.(*Message).Payload", "zmtp.(*Message).Parts",
	"binary.littleEndian.PutUint32", "binary.littleEndian.PutUint64",
}

// TestHelpersInlined builds and disassembles dutybench and fails if a
// function of it calls one of inlinedHelpers: a closure
// made in a function the compiler inlines is compiled without inlining the
// calls in its own body (golang/go#81380), which is why the variant
// factories are marked go:noinline (runFunc).
func TestHelpersInlined(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to disassemble with")
	}
	exe := filepath.Join(t.TempDir(), "dutybench")
	build := exec.Command(goTool, "build", "-o", exe, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))
	cmd := exec.Command(goTool, "tool", "objdump", "-s", `^main\.`, exe)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	require.NoError(t, err, stderr.String())
	var fn string
	calls := 0
	for line := range strings.Lines(string(out)) {
		if rest, ok := strings.CutPrefix(line, "TEXT "); ok {
			fn = ""
			fn = strings.Fields(rest)[0]
			continue
		}
		_, target, ok := strings.Cut(line, "CALL ")
		if !ok {
			continue
		}
		calls++
		target = strings.TrimSuffix(strings.Fields(target)[0], "(SB)")
		for _, h := range inlinedHelpers {
			if strings.HasSuffix(target, "/"+h) || target == h {
				t.Errorf("%s calls %s out of line", fn, target)
			}
		}
	}
	require.Positive(t, calls, "no calls found in the disassembly")
}
