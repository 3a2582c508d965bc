//go:build duty_codegen

package mailbox

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/gcout"
)

// TestSendInlinesTheRingFastPath holds Send to docs/mailbox.md: a small
// plain message is claimed and published by the record core's fast path
// inlined into Send (no call frame between Send and the stores but the
// one that writes the record), and so is the test that asks a Host about
// the consumer once per eighth of the ring (holdsBoundary), from the
// compiler's own report (go build -gcflags=-m).
func TestSendInlinesTheRingFastPath(t *testing.T) {
	out := gcout.Build(t, "-m")
	for _, fn := range []string{`record\.\(\*Producer\)\.ClaimFast`, `record\.\(\*Producer\)\.PublishFast`, `holdsBoundary`} {
		require.Regexp(t, `(?m)^\S*send\.go:\d+:\d+: inlining call to `+fn+`$`, out, "Send must inline %s", fn)
	}
}

// TestIdleActorCycleInlines holds Actor.DoWork to docs/mailbox.md: an idle
// cycle is decided in line (the cycle count, and idlePoll with the record
// core's Ready), so it makes no call beyond DoWork itself.
func TestIdleActorCycleInlines(t *testing.T) {
	out := gcout.Build(t, "-m")
	for _, fn := range []string{`\(\*Mailbox\)\.countCycle`, `\(\*Mailbox\)\.idlePoll`, `record\.\(\*Reader\)\.Ready`} {
		require.Regexp(t, `(?m)^\S*actor\.go:\d+:\d+: inlining call to `+fn+`$`, out, "DoWork must inline %s", fn)
	}
}
