package layoutdoc

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/broadcast"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/ipc/counters"
	"github.com/dutyrt/duty/ipc/errlog"
	"github.com/dutyrt/duty/ringbuf"
)

// constants is every number docs/layouts.md states, from the code.
var constants = map[string]int64{
	"ringbuf.TrailerLength":            ringbuf.TrailerLength,
	"ringbuf.TailPositionOffset":       ringbuf.TailPositionOffset,
	"ringbuf.HeadCachePositionOffset":  ringbuf.HeadCachePositionOffset,
	"ringbuf.HeadPositionOffset":       ringbuf.HeadPositionOffset,
	"ringbuf.CorrelationCounterOffset": ringbuf.CorrelationCounterOffset,
	"ringbuf.ConsumerHeartbeatOffset":  ringbuf.ConsumerHeartbeatOffset,
	"ringbuf.HeaderLength":             ringbuf.HeaderLength,
	"ringbuf.LengthOffset":             ringbuf.LengthOffset,
	"ringbuf.TypeOffset":               ringbuf.TypeOffset,
	"ringbuf.RecordAlignment":          ringbuf.RecordAlignment,
	"ringbuf.PaddingTypeID":            int64(ringbuf.PaddingTypeID),
	"ringbuf.MinCapacityOneToOne":      ringbuf.MinCapacityOneToOne,
	"ringbuf.MinCapacityManyToOne":     ringbuf.MinCapacityManyToOne,

	"broadcast.TrailerLength":           broadcast.TrailerLength,
	"broadcast.TailIntentCounterOffset": broadcast.TailIntentCounterOffset,
	"broadcast.TailCounterOffset":       broadcast.TailCounterOffset,
	"broadcast.LatestCounterOffset":     broadcast.LatestCounterOffset,
	"broadcast.HeaderLength":            broadcast.HeaderLength,
	"broadcast.RecordAlignment":         broadcast.RecordAlignment,
	"broadcast.PaddingTypeID":           int64(broadcast.PaddingTypeID),

	"counters.ValueRecordLength":          counters.ValueRecordLength,
	"counters.ValueOffset":                counters.ValueOffset,
	"counters.RegistrationIDOffset":       counters.RegistrationIDOffset,
	"counters.OwnerIDOffset":              counters.OwnerIDOffset,
	"counters.ReferenceIDOffset":          counters.ReferenceIDOffset,
	"counters.MetadataRecordLength":       counters.MetadataRecordLength,
	"counters.StateOffset":                counters.StateOffset,
	"counters.TypeIDOffset":               counters.TypeIDOffset,
	"counters.FreeForReuseDeadlineOffset": counters.FreeForReuseDeadlineOffset,
	"counters.KeyOffset":                  counters.KeyOffset,
	"counters.MaxKeyLength":               counters.MaxKeyLength,
	"counters.LabelLengthOffset":          counters.LabelLengthOffset,
	"counters.LabelOffset":                counters.LabelOffset,
	"counters.MaxLabelLength":             counters.MaxLabelLength,

	"errlog.RecordAlignment":                 errlog.RecordAlignment,
	"errlog.LengthOffset":                    errlog.LengthOffset,
	"errlog.ObservationCountOffset":          errlog.ObservationCountOffset,
	"errlog.LastObservationTimestampOffset":  errlog.LastObservationTimestampOffset,
	"errlog.FirstObservationTimestampOffset": errlog.FirstObservationTimestampOffset,
	"errlog.EncodedErrorOffset":              errlog.EncodedErrorOffset,
	"errlog.HeaderLength":                    errlog.HeaderLength,

	"ipc.KindErrorLog": int64(ipc.KindErrorLog),

	"ipc.HeaderLength":           ipc.HeaderLength,
	"ipc.MagicOffset":            ipc.MagicOffset,
	"ipc.VersionOffset":          ipc.VersionOffset,
	"ipc.KindOffset":             ipc.KindOffset,
	"ipc.HeaderLengthOffset":     ipc.HeaderLengthOffset,
	"ipc.SectionCountOffset":     ipc.SectionCountOffset,
	"ipc.SectionAlignmentOffset": ipc.SectionAlignmentOffset,
	"ipc.FileLengthOffset":       ipc.FileLengthOffset,
	"ipc.OwnerPIDOffset":         ipc.OwnerPIDOffset,
	"ipc.OwnerStartTimeOffset":   ipc.OwnerStartTimeOffset,
	"ipc.CreatedOffset":          ipc.CreatedOffset,
	"ipc.LivenessTimeoutOffset":  ipc.LivenessTimeoutOffset,
	"ipc.HeartbeatOffset":        ipc.HeartbeatOffset,
	"ipc.SectionTableOffset":     ipc.SectionTableOffset,
	"ipc.SectionEntryLength":     ipc.SectionEntryLength,
	"ipc.MaxSections":            ipc.MaxSections,
	"ipc.SpareSlotsOffset":       ipc.SpareSlotsOffset,
	"ipc.SpareSlotLength":        ipc.SpareSlotLength,
	"ipc.SpareSlotCount":         ipc.SpareSlotCount,
	"ipc.SectionAlignment":       ipc.SectionAlignment,

	"ipc.PubLayoutVersion":      int64(ipc.PubLayoutVersion),
	"ipc.SlotLength":            ipc.SlotLength,
	"ipc.SlotStateOffset":       ipc.SlotStateOffset,
	"ipc.SlotRegistrationShift": ipc.SlotRegistrationShift,
	"ipc.SlotFree":              int64(ipc.SlotFree),
	"ipc.SlotJoining":           int64(ipc.SlotJoining),
	"ipc.SlotActive":            int64(ipc.SlotActive),
	"ipc.SlotDropped":           int64(ipc.SlotDropped),
	"ipc.SlotPositionOffset":    ipc.SlotPositionOffset,
	"ipc.SlotHeartbeatOffset":   ipc.SlotHeartbeatOffset,
	"ipc.SlotPIDOffset":         ipc.SlotPIDOffset,
	"ipc.SlotStartTimeOffset":   ipc.SlotStartTimeOffset,
	"ipc.SlotJoinOffset":        ipc.SlotJoinOffset,
	"ipc.SlotDroppedOffset":     ipc.SlotDroppedOffset,
}

// selfChecked are the packages whose own tests check their rows
// (layoutdoc.Check), unexported constants included.
var selfChecked = map[string]bool{"mailbox": true}

func TestLayoutsPageMatchesTheCode(t *testing.T) {
	seen := map[string]bool{}
	for name, got := range Rows(t) {
		if pkg, _, _ := strings.Cut(name, "."); selfChecked[pkg] {
			continue
		}
		want, ok := constants[name]
		require.True(t, ok, "docs/layouts.md lists %s, which this test does not know", name)
		require.Equal(t, want, got, "docs/layouts.md: %s", name)
		seen[name] = true
	}
	for name := range constants {
		require.True(t, seen[name], "docs/layouts.md does not list %s", name)
	}
}
