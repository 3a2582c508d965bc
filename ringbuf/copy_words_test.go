//go:build duty_codegen && (amd64 || arm64)

package ringbuf

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/gcout"
)

// TestWriteFastPathsInlineTheCopy holds Write's fast paths to what
// docs/ringbuf.md says of them: one-to-one Write copies the payload in
// line, and many-to-one Write inlines the record core's fast claim and
// publication (one call, to record.PublishRecord, which inlines its copy:
// tested there). If a compiler's inlining budget ever changes so that one
// of them is no longer inlined, this fails, from the compiler's own report
// (go build -gcflags=-m).
func TestWriteFastPathsInlineTheCopy(t *testing.T) {
	out := gcout.Build(t, "-m")
	for _, c := range []struct{ file, fn string }{
		{`onetoone\.go`, `record\.CopyBlocks`},
		{`onetoone\.go`, `record\.CopyShort`},
		{`manytoone\.go`, `record\.\(\*Producer\)\.ClaimFast`},
		{`manytoone\.go`, `record\.\(\*Producer\)\.PublishFast`},
	} {
		require.Regexp(t, `(?m)^\S*`+c.file+`:\d+:\d+: inlining call to `+c.fn+`$`, out,
			"%s must inline %s", c.file, c.fn)
	}
}

// TestReadyInlines holds Ready to its doc comment: it inlines (and so does
// the record core's Reader.Ready inside it: internal/record checks that),
// so a spin loop that polls with it makes no call while the ring is
// empty. One definition serves both ring types.
func TestReadyInlines(t *testing.T) {
	out := gcout.Build(t, "-m")
	require.Regexp(t, `(?m)^\S*ring\.go:\d+:\d+: can inline \(\*ring\)\.Ready$`, out, "Ready must inline")
	require.Regexp(t, `(?m)^\S*ring\.go:\d+:\d+: inlining call to record\.\(\*Reader\)\.Ready$`, out, "Ready must inline the core's")
}

// TestPrefetchCallsInline holds the prefetching to docs/ringbuf.md
// ("Prefetching"): the one-to-one Write fast path calls the prefetch in
// line (one call, to the assembly, once per block), not through a Go
// function of its own. The read loops' prefetch is the record core's,
// checked there.
func TestPrefetchCallsInline(t *testing.T) {
	out := gcout.Build(t, "-m")
	require.Regexp(t, `(?m)^\S*onetoone\.go:\d+:\d+: inlining call to \(\*ring\)\.prefetchAhead$`, out)
}
