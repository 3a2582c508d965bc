package ipc

import (
	"encoding/binary"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/layoutdoc"
	"github.com/dutyrt/duty/internal/procinfo"
	"golang.org/x/sys/unix"

	"github.com/dutyrt/duty/clock"
)

// TestLayoutConstants pins every offset to the byte table in docs/ipc.md.
func TestLayoutConstants(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"magicOffset", magicOffset, 0},
		{"versionOffset", versionOffset, 8},
		{"kindOffset", kindOffset, 12},
		{"headerLengthOffset", headerLengthOffset, 16},
		{"sectionCountOffset", sectionCountOffset, 20},
		{"sectionAlignmentOffset", sectionAlignmentOffset, 24},
		{"fileLengthOffset", fileLengthOffset, 32},
		{"ownerPIDOffset", ownerPIDOffset, 40},
		{"ownerStartTimeOffset", ownerStartTimeOffset, 48},
		{"createdOffset", createdOffset, 56},
		{"livenessTimeoutOffset", livenessTimeoutOffset, 64},
		{"heartbeatOffset", heartbeatOffset, 128},
		{"sectionTableOffset", sectionTableOffset, 256},
		{"sectionEntryLength", sectionEntryLength, 16},
		{"sectionOffsetField", sectionOffsetField, 0},
		{"sectionLengthField", sectionLengthField, 8},
		{"spareSlotsOffset", spareSlotsOffset, 512},
		{"spareSlotLength", spareSlotLength, 128},
		{"spareSlotCount", spareSlotCount, 8},
		{"maxSections", maxSections, 8},
		{"headerLength", headerLength, 4096},
		{"sectionAlignment", sectionAlignment, 4096},
	} {
		require.Equal(t, c.want, c.got, c.name)
	}
	require.Equal(t, "DUTYSHM\x00", fileMagic)
	require.Len(t, fileMagic, 8)
	require.Equal(t, int32(1), fileLayoutVersion)
	require.Equal(t, int64(-1), heartbeatClosed)

	// Invariants the code relies on: aligned words, the heartbeat alone in
	// its 128-byte slot, tables inside the header, no overlaps.
	for _, off := range []int{fileLengthOffset, ownerPIDOffset, ownerStartTimeOffset, createdOffset, livenessTimeoutOffset, heartbeatOffset, sectionTableOffset} {
		require.Zero(t, off%8, off)
	}
	require.Zero(t, versionOffset%4)
	require.LessOrEqual(t, livenessTimeoutOffset+8, heartbeatOffset)
	require.Zero(t, heartbeatOffset%128)
	require.LessOrEqual(t, heartbeatOffset+128, sectionTableOffset)
	require.LessOrEqual(t, sectionTableOffset+maxSections*sectionEntryLength, spareSlotsOffset)
	require.Zero(t, spareSlotsOffset%128)
	require.LessOrEqual(t, spareSlotsOffset+spareSlotCount*spareSlotLength, headerLength)
	require.Zero(t, headerLength%sectionAlignment)
}

// TestLayoutRawBytes creates a file and decodes its raw bytes with plain
// little-endian reads at the documented offsets.
func TestLayoutRawBytes(t *testing.T) {
	dir := testDir(t)
	created := time.UnixMilli(1_700_000_000_123)
	f, err := create(dir, "layout", KindCounters, []int{100, 5000, 8}, WithLivenessTimeout(3*time.Second),
		WithClock(clock.Func(func() time.Time { return created })))
	require.NoError(t, err)
	defer f.Close()

	b, err := os.ReadFile(f.Path())
	require.NoError(t, err)
	le := binary.LittleEndian
	require.Equal(t, "DUTYSHM\x00", string(b[0:8]))
	require.Equal(t, uint32(1), le.Uint32(b[8:]), "version")
	require.Equal(t, uint32(3), le.Uint32(b[12:]), "kind")
	require.Equal(t, uint32(4096), le.Uint32(b[16:]), "header length")
	require.Equal(t, uint32(3), le.Uint32(b[20:]), "section count")
	require.Equal(t, uint32(4096), le.Uint32(b[24:]), "section alignment")
	require.Equal(t, uint32(0), le.Uint32(b[28:]), "reserved")
	// header 4096 + 100 -> 8192 + 5000 -> 16384 + 8 -> 20480
	require.Equal(t, uint64(20480), le.Uint64(b[32:]), "file length")
	require.Len(t, b, 20480)
	require.Equal(t, uint64(os.Getpid()), le.Uint64(b[40:]), "pid")
	start, _, known := procinfo.Info(os.Getpid())
	require.True(t, known)
	require.Equal(t, start, le.Uint64(b[48:]), "start time")
	require.NotZero(t, start)
	require.Equal(t, uint64(created.UnixMilli()), le.Uint64(b[56:]), "created")
	require.Equal(t, uint64(3000), le.Uint64(b[64:]), "liveness timeout ms")
	require.Equal(t, uint64(created.UnixMilli()), le.Uint64(b[128:]), "heartbeat starts at creation")
	for i, want := range [][2]uint64{{4096, 100}, {8192, 5000}, {16384, 8}} {
		e := 256 + 16*i
		require.Equal(t, want[0], le.Uint64(b[e:]), "section %d offset", i)
		require.Equal(t, want[1], le.Uint64(b[e+8:]), "section %d length", i)
	}
	for i := 3; i < 8; i++ {
		require.Zero(t, le.Uint64(b[256+16*i:]))
		require.Zero(t, le.Uint64(b[256+16*i+8:]))
	}
	zero := func(from, to int) {
		for i := from; i < to; i++ {
			require.Zero(t, b[i], "byte %d", i)
		}
	}
	zero(72, 128)
	zero(136, 256)
	zero(384, 4096)
	zero(4096, len(b))

	// Sections and spare slots alias exactly those bytes of the mapping.
	for i, want := range [][2]int{{4096, 100}, {8192, 5000}, {16384, 8}} {
		s, err := f.Section(i)
		require.NoError(t, err)
		require.Len(t, s, want[1])
		require.Equal(t, want[1], cap(s))
		s[0] = byte(i + 1)
	}
	for i := range spareSlotCount {
		s, err := f.spareSlotAt(i)
		require.NoError(t, err)
		require.Len(t, s, 128)
		s[0] = byte(0x40 + i)
	}
	b, err = os.ReadFile(f.Path())
	require.NoError(t, err)
	require.Equal(t, []byte{1, 2, 3}, []byte{b[4096], b[8192], b[16384]})
	for i := range spareSlotCount {
		require.Equal(t, byte(0x40+i), b[512+128*i])
	}
	_, err = f.Section(3)
	require.ErrorIs(t, err, ErrArgument)
	_, err = f.spareSlotAt(8)
	require.ErrorIs(t, err, ErrArgument)

	// Preallocated: the file's blocks cover its length (not sparse).
	var st unix.Stat_t
	require.NoError(t, unix.Stat(f.Path(), &st))
	require.GreaterOrEqual(t, st.Blocks*512, st.Size)
}

// docs/layouts.md states the file layer's constants, exported or not.
func TestLayoutsPage(t *testing.T) {
	layoutdoc.Check(t, "ipc", map[string]int64{
		"KindErrorLog":           int64(KindErrorLog),
		"KindHistograms":         int64(KindHistograms),
		"headerLength":           headerLength,
		"magicOffset":            magicOffset,
		"versionOffset":          versionOffset,
		"kindOffset":             kindOffset,
		"headerLengthOffset":     headerLengthOffset,
		"sectionCountOffset":     sectionCountOffset,
		"sectionAlignmentOffset": sectionAlignmentOffset,
		"fileLengthOffset":       fileLengthOffset,
		"ownerPIDOffset":         ownerPIDOffset,
		"ownerStartTimeOffset":   ownerStartTimeOffset,
		"createdOffset":          createdOffset,
		"livenessTimeoutOffset":  livenessTimeoutOffset,
		"heartbeatOffset":        heartbeatOffset,
		"sectionTableOffset":     sectionTableOffset,
		"sectionEntryLength":     sectionEntryLength,
		"maxSections":            maxSections,
		"spareSlotsOffset":       spareSlotsOffset,
		"spareSlotLength":        spareSlotLength,
		"spareSlotCount":         spareSlotCount,
		"sectionAlignment":       sectionAlignment,
	})
}
