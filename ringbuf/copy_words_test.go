//go:build amd64 || arm64

package ringbuf

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/gcout"
)

// TestWriteFastPathsInlineTheCopy holds Write's fast paths to what
// docs/ringbuf.md says of them: one-to-one Write copies the payload in
// line, and many-to-one Write inlines the fast claim and the publication
// (one call, to ringfast.PublishRecord, which inlines its copy: tested
// there). If a compiler's inlining budget ever changes so that one of them
// is no longer inlined, this fails, from the compiler's own report (go
// build -gcflags=-m).
func TestWriteFastPathsInlineTheCopy(t *testing.T) {
	out := gcout.Build(t, "-m")
	for _, c := range []struct{ file, fn string }{
		{`onetoone\.go`, `ringfast\.CopyBlocks`},
		{`onetoone\.go`, `ringfast\.CopyShort`},
		{`manytoone\.go`, `ringfast\.\(\*Producer\)\.Claim`},
		{`manytoone\.go`, `ringfast\.\(\*Producer\)\.Publish`},
	} {
		require.Regexp(t, `(?m)^\S*`+c.file+`:\d+:\d+: inlining call to `+c.fn+`$`, out,
			"%s must inline %s", c.file, c.fn)
	}
}
