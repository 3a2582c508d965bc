package ipc

import (
	"encoding/binary"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPublicationLayoutOffsets asserts the layout constants against the
// table in docs/ipc.md ("IPC publication", Layout).
func TestPublicationLayoutOffsets(t *testing.T) {
	require.Equal(t, Kind(2), KindPublication)
	require.Equal(t, 4096, PubMetadataLength)
	for off, want := range map[int]int{
		PubVersionOffset: 0, PubMaxSubscribersOffset: 4, PubCapacityOffset: 8, PubWindowOffset: 16,
		PubMTUOffset: 24, PubMaxMessageOffset: 28, PubSubscriberTimeoutOffset: 32, PubUnblockTimeoutOffset: 40,
		PubMaxPositionOffset: 48, PubTailOffset: 128, PubLimitOffset: 256, PubConnectedOffset: 264,
		PubCleanPositionOffset: 384, PubCleanSequenceOffset: 392, PubEndOfStreamOffset: 512,
		PubNextRegistrationOffset: 640, PubSlotsInUseOffset: 648, PubExternalOffset: 656,
		PubDroppedOffset: 768, PubUnblockedOffset: 776, PubFreedOffset: 784,
		PubBackPressuredOffset: 896, PubNotConnectedOffset: 904, PubAdminActionOffset: 912,
	} {
		require.Equal(t, want, off)
	}
	for off, want := range map[int]int{
		SlotStateOffset: 0, SlotPositionOffset: 8, SlotHeartbeatOffset: 16,
		SlotPIDOffset: 32, SlotStartTimeOffset: 40, SlotJoinOffset: 48, SlotDroppedOffset: 56,
	} {
		require.Equal(t, want, off)
	}
	require.Equal(t, int32(2), PubLayoutVersion, "version 2: state and registration id in one word")
	require.Equal(t, 8, SlotRegistrationShift)
	require.Equal(t, int64(1<<55-1), MaxRegistrationID)
	require.Equal(t, int64(7<<8|3), slotWord(7, SlotDropped))
	require.Equal(t, SlotDropped, slotState(slotWord(MaxRegistrationID, SlotDropped)))
	require.Equal(t, MaxRegistrationID, slotRegistration(slotWord(MaxRegistrationID, SlotDropped)))
	require.Equal(t, 128, SlotLength)
	// The hot words written by different parties are on different 128-byte lines.
	lines := map[int]string{}
	for off, who := range map[int]string{PubTailOffset: "tail", PubLimitOffset: "limit", PubCleanPositionOffset: "clean",
		PubEndOfStreamOffset: "eos", PubNextRegistrationOffset: "registration", PubDroppedOffset: "rare counters",
		PubBackPressuredOffset: "outcome counters"} {
		require.Empty(t, lines[off/128], "%s shares a line", who)
		lines[off/128] = who
	}
	require.Equal(t, int32(1<<30), FragmentFlag)
	require.Equal(t, int32(1<<29), BeginFlag)
	require.Equal(t, int32(1<<28), EndFlag)
	require.Equal(t, int32(1<<28-1), MaxTypeID)
	require.Equal(t, int64(1<<62), SealedBit)
}

// TestPublicationLayoutBytes reads a publication file's bytes with plain
// little-endian loads after a join, an offer, a fragmented offer and Close,
// and checks every documented word.
func TestPublicationLayoutBytes(t *testing.T) {
	p := newTestPublication(t, 4096, WithMTU(64), WithMaxSubscribers(3),
		WithSubscriberTimeout(7*time.Second), WithUnblockTimeout(9*time.Second))
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
	require.Equal(t, uint32(KindPublication), le.Uint32(b[KindOffset:]))
	require.Equal(t, uint32(3), le.Uint32(b[SectionCountOffset:]))
	sec := func(i int) (int, int) {
		e := sectionEntry(i)
		return int(le.Uint64(b[e:])), int(le.Uint64(b[e+8:]))
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
	require.Equal(t, []uint32{64, uint32(9 | FragmentFlag | BeginFlag)}, []uint32{le.Uint32(l[16:]), le.Uint32(l[20:])}, "BEGIN fragment")
	require.Equal(t, []uint32{52, uint32(9 | FragmentFlag | EndFlag)}, []uint32{le.Uint32(l[80:]), le.Uint32(l[84:])}, "END fragment")

	sl := b[slotOff:]
	require.Equal(t, uint64(s.RegistrationID())<<8|uint64(SlotActive), le.Uint64(sl[0:]), "state word: registration id, active")
	require.Equal(t, uint64(0), le.Uint64(sl[8:]), "position: nothing polled")
	require.InDelta(t, time.Now().UnixMilli(), int64(le.Uint64(sl[16:])), 60_000, "heartbeat")
	require.Equal(t, uint64(0), le.Uint64(sl[24:]), "reserved")
	require.Equal(t, uint64(os.Getpid()), le.Uint64(sl[32:]))
	require.Equal(t, uint64(selfStartTime()), le.Uint64(sl[40:]))
	require.Equal(t, make([]byte, 128), sl[128:256], "unused slot")
}
