package duty_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty"
	"github.com/dutyrt/duty/broadcast"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/ipc/counters"
	"github.com/dutyrt/duty/ipc/errlog"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/ringbuf"
)

// Every package's corruption sentinel answers "was this corruption?" with
// the one marker, wrapped or not, and keeps its own identity.
func TestEveryCorruptionSentinelMatchesTheMarker(t *testing.T) {
	sentinels := map[string]error{
		"ringbuf":       ringbuf.ErrCorrupt,
		"broadcast":     broadcast.ErrCorrupt,
		"counters":      counters.ErrCorrupt,
		"errlog":        errlog.ErrCorrupt,
		"ipc":           ipc.ErrCorrupt,
		"mailbox":       mailbox.ErrCorrupt,
		"mailbox frame": mailbox.ErrCorruptFrame,
	}
	for name, s := range sentinels {
		wrapped := fmt.Errorf("%w: at 64: %w", s, errors.New("detail"))
		require.ErrorIs(t, wrapped, duty.ErrCorrupt, name)
		require.ErrorIs(t, wrapped, s, name)
		for other, o := range sentinels {
			if other != name {
				require.NotErrorIs(t, s, o, "%s is not %s", name, other)
			}
		}
	}
	require.NotErrorIs(t, mailbox.ErrBackPressured, duty.ErrCorrupt)
}

// A corruption found deep in a layer reaches the caller of the layer above
// still marked: a mailbox over a ring whose records another process
// scribbled over reports it as mailbox.ErrCorrupt, wrapping
// ringbuf.ErrCorrupt, and as duty.ErrCorrupt.
func ExampleErrCorrupt() {
	mb, _ := mailbox.New(mailbox.Config{Capacity: mailbox.MinCapacity})
	_ = mb.Send(1, []byte("hello"))
	buf := mb.Ring().Buffer()
	buf[0], buf[1] = 0xff, 0x7f // a record length no producer writes
	_, err := mb.Drain(func(*mailbox.Message) mailbox.Action { return mailbox.Continue }, 10)
	fmt.Println(errors.Is(err, duty.ErrCorrupt), errors.Is(err, mailbox.ErrCorrupt), errors.Is(err, ringbuf.ErrCorrupt))
	// Output: true true true
}
