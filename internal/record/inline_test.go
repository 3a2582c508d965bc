//go:build amd64 || arm64

package record

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/gcout"
)

// TestFastPathsInlineTheCopy: PublishRecord copies the payload in line (no
// call, so nothing it holds is spilled), and Claim and Publish are small
// enough for their callers to inline; from the compiler's own report (go
// build -gcflags=-m).
func TestFastPathsInlineTheCopy(t *testing.T) {
	out := gcout.Build(t, "-m")
	for _, fn := range []string{"CopyBlocks", "CopyShort"} {
		require.Regexp(t, `(?m)^\S*publish_(fast|other)\.go:\d+:\d+: inlining call to `+fn+`$`, out,
			"PublishRecord must inline %s", fn)
	}
	for _, fn := range []string{`\(\*Producer\)\.Claim`, `\(\*Producer\)\.Publish`, `Marker`, `RecordSize`} {
		require.Regexp(t, `(?m)^\S*producer\.go:\d+:\d+: can inline `+fn+`( |$)`, out, "%s must be inlinable", fn)
	}
}
