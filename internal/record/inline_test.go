//go:build duty_codegen && (amd64 || arm64)

package record

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/gcout"
)

// TestFastPathsInlineTheCopy: PublishRecord copies the payload in line (no
// call, so nothing it holds is spilled), ClaimFast and PublishFast are
// small enough for their callers to inline (and Write inlines them), as
// are the layout helpers, the
// record checks and the log's accessors that the read loops and the fast
// paths call per record; from the compiler's own report (go build
// -gcflags=-m).
func TestFastPathsInlineTheCopy(t *testing.T) {
	out := gcout.Build(t, "-m")
	for _, fn := range []string{"CopyBlocks", "CopyShort"} {
		require.Regexp(t, `(?m)^\S*publish_(fast|other)\.go:\d+:\d+: inlining call to `+fn+`$`, out,
			"PublishRecord must inline %s", fn)
	}
	for _, c := range []struct{ file, fn string }{
		{`producer`, `\(\*Producer\)\.ClaimFast`},
		{`producer`, `\(\*Producer\)\.PublishFast`},
		{`complete`, `\(\*Producer\)\.CheckMessage`},
		{`layout`, `Marker`},
		{`layout`, `Size`},
		{`layout`, `HeaderWord`},
		{`check`, `Check`},
		{`check`, `CheckClaim`},
		{`log`, `\(\*Log\)\.LengthAt`},
		{`log`, `\(\*Log\)\.TypeAt`},
		{`log`, `\(\*Log\)\.WordAt`},
		{`log`, `\(\*Log\)\.Payload`},
	} {
		require.Regexp(t, `(?m)^\S*`+c.file+`\.go:\d+:\d+: can inline `+c.fn+`( |$)`, out, "%s must be inlinable", c.fn)
	}
	for _, fn := range []string{`\(\*Producer\)\.ClaimFast`, `\(\*Producer\)\.PublishFast`} {
		require.Regexp(t, `(?m)^\S*claim\.go:\d+:\d+: inlining call to `+fn+`$`, out, "Producer.Write must inline %s", fn)
	}
}

// TestReaderInlines holds the consumer's fast paths to docs/ringbuf.md:
// Ready inlines, so a spin loop that polls with it makes no call while
// the ring is empty ("Spinning consumers"), and the read loops call the
// prefetch in line, one call to the assembly once per block, not through
// a Go function of their own ("Prefetching").
func TestReaderInlines(t *testing.T) {
	out := gcout.Build(t, "-m")
	require.Regexp(t, `(?m)^\S*reader\.go:\d+:\d+: can inline \(\*Reader\)\.Ready$`, out)
	require.Regexp(t, `(?m)^\S*reader\.go:\d+:\d+: inlining call to \(\*Reader\)\.prefetchRead$`, out)
}
