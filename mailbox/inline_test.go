//go:build duty_codegen

package mailbox

import (
	"regexp"
	"slices"
	"strings"
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

// TestDispatchCallsTheViewInLine holds the drain's dispatch to
// docs/mailbox.md: a route's in-line view (mailboxdef.View) is called from
// the record closure itself, before anything builds a Message (whose
// payload store is the closure's write barrier): the first indirect call
// of the closure, and the only call before it is setRoute (once per run
// of a type id). From the compiler's listing (go build -gcflags=-S).
func TestDispatchCallsTheViewInLine(t *testing.T) {
	listing := gcout.Build(t, "-S")
	var closure []string
	for _, sym := range regexp.MustCompile(`(?m)^\S+(\.\(\*consumer\)\.init\.func\d+) STEXT`).FindAllStringSubmatch(listing, -1) {
		instrs := gcout.Instructions(listing, sym[1])
		if slices.ContainsFunc(instrs, func(in string) bool { return strings.HasSuffix(in, ".(*consumer).setRoute(SB)") }) {
			closure = instrs
		}
	}
	require.NotEmpty(t, closure, "no record closure calls setRoute")
	var calls []string
	for _, in := range closure {
		if strings.HasPrefix(in, "CALL") {
			calls = append(calls, in)
		}
	}
	require.GreaterOrEqual(t, len(calls), 2, "calls: %v", calls)
	require.True(t, strings.HasSuffix(calls[0], ".(*consumer).setRoute(SB)"), "calls: %v", calls)
	require.False(t, strings.HasSuffix(calls[1], "(SB)"), "the view's handler must be the next call, an indirect one: %v", calls)
}
