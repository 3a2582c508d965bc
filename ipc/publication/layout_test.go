package publication

import (
	"encoding/binary"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/layoutdoc"
	"github.com/dutyrt/duty/ipc"
)

// TestLayoutsPage checks this package's rows of docs/layouts.md (the
// subscriber slot) against the constants: they are unexported, so the
// central test in internal/layoutdoc cannot.
func TestLayoutsPage(t *testing.T) {
	layoutdoc.Check(t, "publication", map[string]int64{
		"layoutVersion":         int64(layoutVersion),
		"slotLength":            slotLength,
		"slotStateOffset":       slotStateOffset,
		"slotRegistrationShift": slotRegistrationShift,
		"slotFree":              int64(slotFree),
		"slotJoining":           int64(slotJoining),
		"slotActive":            int64(slotActive),
		"slotDropped":           int64(slotDropped),
		"slotPositionOffset":    slotPositionOffset,
		"slotHeartbeatOffset":   slotHeartbeatOffset,
		"slotPIDOffset":         slotPIDOffset,
		"slotStartTimeOffset":   slotStartTimeOffset,
		"slotJoinOffset":        slotJoinOffset,
		"slotDroppedOffset":     slotDroppedOffset,
	})
}

// TestPublicationLayoutOffsets asserts the layout constants against the
// table in docs/publication.md (Layout).
func TestPublicationLayoutOffsets(t *testing.T) {
	require.Equal(t, ipc.Kind(2), ipc.KindPublication)
	require.Equal(t, 4096, metadataLength)
	for off, want := range map[int]int{
		versionOffset: 0, maxSubscribersOffset: 4, capacityOffset: 8, windowOffset: 16,
		mtuOffset: 24, maxMessageOffset: 28, subscriberTimeoutOffset: 32, unblockTimeoutOffset: 40,
		maxPositionOffset: 48, tailOffset: 128, limitOffset: 256, connectedOffset: 264,
		cleanPositionOffset: 384, cleanSequenceOffset: 392, endOfStreamOffset: 512,
		nextRegistrationOffset: 640, slotsInUseOffset: 648, externalOffset: 656,
		droppedOffset: 768, unblockedOffset: 776, freedOffset: 784,
		backPressuredOffset: 896, notConnectedOffset: 904, adminActionOffset: 912,
	} {
		require.Equal(t, want, off)
	}
	for off, want := range map[int]int{
		slotStateOffset: 0, slotPositionOffset: 8, slotHeartbeatOffset: 16,
		slotPIDOffset: 32, slotStartTimeOffset: 40, slotJoinOffset: 48, slotDroppedOffset: 56,
	} {
		require.Equal(t, want, off)
	}
	require.Equal(t, int32(2), layoutVersion, "version 2: state and registration id in one word")
	require.Equal(t, 8, slotRegistrationShift)
	require.Equal(t, int64(1<<55-1), maxRegistrationID)
	require.Equal(t, int64(7<<8|3), slotWord(7, slotDropped))
	require.Equal(t, slotDropped, slotState(slotWord(maxRegistrationID, slotDropped)))
	require.Equal(t, maxRegistrationID, slotRegistration(slotWord(maxRegistrationID, slotDropped)))
	require.Equal(t, 128, slotLength)
	// The hot words written by different parties are on different 128-byte lines.
	lines := map[int]string{}
	for off, who := range map[int]string{tailOffset: "tail", limitOffset: "limit", cleanPositionOffset: "clean",
		endOfStreamOffset: "eos", nextRegistrationOffset: "registration", droppedOffset: "rare counters",
		backPressuredOffset: "outcome counters"} {
		require.Empty(t, lines[off/128], "%s shares a line", who)
		lines[off/128] = who
	}
	require.Equal(t, int32(1<<30), fragmentFlag)
	require.Equal(t, int32(1<<29), beginFlag)
	require.Equal(t, int32(1<<28), endFlag)
	require.Equal(t, int32(1<<24-1), maxTypeID)
	require.Equal(t, int64(1<<62), sealedBit)
}

// TestPublicationLayoutBytes reads a publication file's bytes with plain
// little-endian loads after a join, an offer, a fragmented offer and Close,
// and checks every documented word.
func TestPublicationLayoutBytes(t *testing.T) {
	p := newTestPublication(t, 4096, withMTU(64), withMaxSubscribers(3),
		WithSubscriberTimeout(7*time.Second), withUnblockTimeout(9*time.Second))
	s := newTestSubscription(t, p)
	_, err := p.Offer(9, []byte("abc"))
	require.NoError(t, err)
	_, err = p.Offer(9, make([]byte, 100)) // 56 + 44 bytes: 2 fragments
	require.NoError(t, err)
	path := p.File().Path()
	require.NoError(t, p.Close())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	le := binary.LittleEndian
	require.Equal(t, uint32(ipc.KindPublication), le.Uint32(b[ipcKindOffset:]))
	require.Equal(t, uint32(3), le.Uint32(b[ipcSectionCountOffset:]))
	sec := func(i int) (int, int) {
		e := ipcSectionTableOffset + i*ipcSectionEntryLength
		return int(le.Uint64(b[e+ipcSectionOffsetField:])), int(le.Uint64(b[e+ipcSectionLengthField:]))
	}
	logOff, logLen := sec(0)
	metaOff, metaLen := sec(1)
	slotOff, slotLen := sec(2)
	require.Equal(t, []int{4096, 4096, 8192, 4096, 12288, 3 * 128}, []int{logOff, logLen, metaOff, metaLen, slotOff, slotLen})
	m := b[metaOff:]
	require.Equal(t, uint32(2), le.Uint32(m[0:]), "version")
	require.Equal(t, uint32(3), le.Uint32(m[4:]), "max subscribers")
	require.Equal(t, uint64(4096), le.Uint64(m[8:]), "capacity")
	require.Equal(t, uint64(2048), le.Uint64(m[16:]), "window")
	require.Equal(t, uint32(64), le.Uint32(m[24:]), "MTU")
	require.Equal(t, uint32(512), le.Uint32(m[28:]), "max message")
	require.Equal(t, uint64(7000), le.Uint64(m[32:]), "subscriber timeout")
	require.Equal(t, uint64(9000), le.Uint64(m[40:]), "unblock timeout")
	require.Equal(t, uint64(1<<62-4*4096), le.Uint64(m[48:]), "max position")
	end := uint64(16 + 64 + 56)
	require.Equal(t, end|1<<62, le.Uint64(m[128:]), "tail, sealed")
	require.Equal(t, uint64(2048), le.Uint64(m[256:]), "limit: join position 0 + window")
	require.Equal(t, uint32(1), le.Uint32(m[264:]), "connected")
	require.Equal(t, end, le.Uint64(m[512:]), "end of stream")
	require.Equal(t, uint64(1), le.Uint64(m[640:]), "registrations")
	require.Equal(t, uint32(1), le.Uint32(m[648:]), "slots in use")

	l := b[logOff:]
	require.Equal(t, []uint32{11, 9}, []uint32{le.Uint32(l[0:]), le.Uint32(l[4:])}, "plain record")
	require.Equal(t, "abc", string(l[8:11]))
	require.Equal(t, []uint32{64, uint32(9 | fragmentFlag | beginFlag)}, []uint32{le.Uint32(l[16:]), le.Uint32(l[20:])}, "BEGIN fragment")
	require.Equal(t, []uint32{52, uint32(9 | fragmentFlag | endFlag)}, []uint32{le.Uint32(l[80:]), le.Uint32(l[84:])}, "END fragment")

	sl := b[slotOff:]
	require.Equal(t, uint64(s.registrationID())<<8|uint64(slotActive), le.Uint64(sl[0:]), "state word: registration id, active")
	require.Equal(t, uint64(0), le.Uint64(sl[8:]), "position: nothing polled")
	require.InDelta(t, time.Now().UnixMilli(), int64(le.Uint64(sl[16:])), 60_000, "heartbeat")
	require.Equal(t, uint64(0), le.Uint64(sl[24:]), "reserved")
	pid, start := ipcfile.SelfProcess()
	require.Equal(t, uint64(pid), le.Uint64(sl[32:]))
	require.Equal(t, start, le.Uint64(sl[40:]))
	require.Equal(t, make([]byte, 128), sl[128:256], "unused slot")
}
