//go:build amd64 || arm64

package ringbuf

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/gcout"
)

// TestWriteFastPathsInlineTheCopy holds Write's fast paths to what
// docs/ringbuf.md says of them: the payload copy makes no call. If a
// compiler's inlining budget ever changes so that copyBlocks or copyShort
// is no longer inlined into a Write, this fails, from the compiler's own
// report (go build -gcflags=-m).
func TestWriteFastPathsInlineTheCopy(t *testing.T) {
	out := gcout.Build(t, "-m")
	// One-to-one Write copies in line; many-to-one Write through
	// publishRecord (publish_fast.go, or publish_other.go under -race).
	for _, file := range []string{`onetoone\.go`, `publish_(fast|other)\.go`} {
		for _, fn := range []string{"copyBlocks", "copyShort"} {
			require.Regexp(t, `(?m)^\S*`+file+`:\d+:\d+: inlining call to `+fn+`$`, out,
				"%s must inline %s", file, fn)
		}
	}
}
