package mailbox

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/layoutdoc"
	"github.com/dutyrt/duty/internal/mailboxdef"
)

// The words struct is the layout the constants state, and docs/layouts.md
// states the constants.
func TestWordsLayout(t *testing.T) {
	var w words
	require.Equal(t, uintptr(WordsLength), unsafe.Sizeof(w))
	for off, field := range map[uintptr]uintptr{
		stateOffset:         unsafe.Offsetof(w.state),
		doorbellOffset:      unsafe.Offsetof(w.doorbell),
		deliveredOffset:     unsafe.Offsetof(w.delivered),
		maxDepthOffset:      unsafe.Offsetof(w.maxDepth),
		tornOffset:          unsafe.Offsetof(w.torn),
		corruptOffset:       unsafe.Offsetof(w.corrupt),
		discardedOffset:     unsafe.Offsetof(w.discarded),
		backPressuredOffset: unsafe.Offsetof(w.backPressured),
		refusedClosedOffset: unsafe.Offsetof(w.refusedClosed),
	} {
		require.Equal(t, off, field)
	}
	layoutdoc.Check(t, "mailbox", map[string]int64{
		"WordsLength":           WordsLength,
		"stateOffset":           stateOffset,
		"doorbellOffset":        doorbellOffset,
		"deliveredOffset":       deliveredOffset,
		"maxDepthOffset":        maxDepthOffset,
		"tornOffset":            tornOffset,
		"corruptOffset":         corruptOffset,
		"discardedOffset":       discardedOffset,
		"backPressuredOffset":   backPressuredOffset,
		"refusedClosedOffset":   refusedClosedOffset,
		"framedFlag":            int64(framedFlag),
		"frameHeaderLength":     frameHeaderLength,
		"frameKeyOffset":        mailboxdef.KeyOffset,
		"frameSequenceOffset":   mailboxdef.SequenceOffset,
		"frameIndexOffset":      mailboxdef.IndexOffset,
		"frameCountOffset":      mailboxdef.CountOffset,
		"frameBodyLengthOffset": mailboxdef.BodyLengthOffset,
		"framePartsOffset":      mailboxdef.PartsOffset,
		"partLengthPrefix":      partLengthPrefix,
		"checksumLength":        checksumLength,
	})
}
