//go:build amd64 || arm64

package ringbuf

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWriteFastPathsInlineTheCopy holds Write's fast paths to what
// docs/ringbuf.md says of them: the payload copy makes no call. If a
// compiler's inlining budget ever changes so that copyBlocks or copyShort
// is no longer inlined into a Write, this fails, from the compiler's own
// report (go build -gcflags=-m).
func TestWriteFastPathsInlineTheCopy(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	out, err := exec.Command(goTool, "build", "-gcflags=-m", "-o", "/dev/null", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	// One-to-one Write copies in line; many-to-one Write through
	// publishRecord (publish_fast.go, or publish_other.go under -race).
	for _, file := range []string{`onetoone\.go`, `publish_(fast|other)\.go`} {
		for _, fn := range []string{"copyBlocks", "copyShort"} {
			require.Regexp(t, `(?m)^\S*`+file+`:\d+:\d+: inlining call to `+fn+`$`, string(out),
				"%s must inline %s", file, fn)
		}
	}
}
