package journal

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/dutyrt/duty/internal/journalfile"
	"github.com/stretchr/testify/require"
)

// The layout constants are the single source of the byte layouts; the
// tables of docs/journal.md must state the same offsets.
func TestLayoutMatchesTheDocs(t *testing.T) {
	require.Zero(t, journalfile.RecordHeaderLength%journalfile.RecordAlignment)
	require.Zero(t, journalfile.SegmentHeaderLength%journalfile.RecordAlignment)
	require.Zero(t, MinSegmentSize%(1<<12), "segments are whole pages")
	require.Equal(t, journalfile.RecordHeaderLength, journalfile.TimestampOffset+8)
	require.Equal(t, journalfile.EndMarkerLength, journalfile.MagicOffset+4)
	require.Equal(t, uint32(journalfile.Version), uint32(journalfile.RecordMagic&^journalfile.MagicMask))
	require.Equal(t, uint32(journalfile.Version), uint32(journalfile.EndMagic&^journalfile.MagicMask))
	require.Equal(t, uint32(journalfile.Version), uint32(journalfile.PadMagic&^journalfile.MagicMask))

	b, err := os.ReadFile("../docs/journal.md")
	require.NoError(t, err)
	doc := string(b)
	rows := []struct {
		section     string
		offset, len int
		field       string
	}{
		{"### Segment header", journalfile.SegMagicOffset, 8, "magic `" + journalfile.SegMagic + "`"},
		{"### Segment header", journalfile.SegSizeOffset, 8, "segment size"},
		{"### Segment header", journalfile.SegStartOffset, 8, "start position"},
		{"### Segment header", journalfile.SegCreatedOffset, 8, "creation time"},
		{"### Segment header", journalfile.SegCRCOffset, 4, "CRC32C of bytes 0..39"},
		{"### Record", journalfile.LengthOffset, 4, "length of header and body"},
		{"### Record", journalfile.MagicOffset, 4, fmt.Sprintf("magic and version: `%#08X`", journalfile.RecordMagic)},
		{"### Record", journalfile.CrcOffset, 4, "CRC32C (Castagnoli)"},
		{"### Record", journalfile.StreamOffset, 4, "stream id"},
		{"### Record", journalfile.TypeOffset, 4, "type id"},
		{"### Record", journalfile.FlagsOffset, 4, "flags"},
		{"### Record", journalfile.SequenceOffset, 8, "sequence number"},
		{"### Record", journalfile.TimestampOffset, 8, "timestamp"},
		{"### Record", journalfile.RecordHeaderLength, -1, "body"},
		{"### Checkpoint", journalfile.CkptSizeOffset, 8, "segment size"},
		{"### Checkpoint", journalfile.CkptFlushed, 8, "flushed position"},
		{"### Checkpoint", journalfile.CkptTime, 8, "time written"},
		{"### Checkpoint", journalfile.CkptFlags, 4, "flags"},
		{"### Checkpoint", journalfile.CkptCRC, 4, "CRC32C of bytes 0..43"},
		{"### Checkpoint", journalfile.CkptFirst, 8, "first segment"},
		{"### Checkpoint", journalfile.CkptFirstCRC, 4, "CRC32C of bytes 0..55"},
		{"### Stream index", journalfile.IdxStreamOffset, 4, "stream id"},
		{"### Stream index", journalfile.IdxEntryLenOffset, 4, "entry length (16)"},
		{"### Stream index", journalfile.IdxFirstOffset, 8, "first sequence"},
		{"### Stream index", journalfile.IdxCRCOffset, 4, "CRC32C of bytes 0..31"},
		{"### Status file", 0, 8, "magic `" + journalfile.StatusMagic + "`"},
		{"### Status file", journalfile.StVersionOffset, 4, "layout version"},
		{"### Status file", journalfile.StLengthOffset, 4, fmt.Sprintf("length (%d)", journalfile.StatusLength)},
		{"### Status file", journalfile.StCommittedOffset, 8, "committed position"},
		{"### Status file", journalfile.StFlushedOffset, 8, "flushed position"},
		{"### Status file", journalfile.StTailersOffset, 8, "registered Tailers"},
		{"### Status file", journalfile.StSegmentsOffset, 8, "segments in the journal"},
		{"### Status file", journalfile.StUpdatedOffset, 8, "updated"},
		{"### Status file", journalfile.StWriterPIDOffset, 8, "writer's process id"},
		{"### Reader registry", 0, 8, "magic `" + journalfile.ReadersMagic + "`"},
		{"### Reader registry", journalfile.RdVersionOffset, 4, "layout version"},
		{"### Reader registry", journalfile.RdHeaderLenOffset, 4, fmt.Sprintf("header length (%d)", journalfile.ReadersHeaderLength)},
		{"### Reader registry", journalfile.RdSlotLenOffset, 4, fmt.Sprintf("slot length (%d)", journalfile.ReaderSlotLength)},
		{"### Reader registry", journalfile.RdSlotsOffset, 4, "slots"},
		{"### Reader registry", journalfile.RdCRCOffset, 4, "CRC32C of bytes 0..23"},
		{"### Reader registry", journalfile.RdProposedOffset, 8, "proposed floor"},
		{"### Reader registry", journalfile.RdFloorOffset, 8, "floor"},
		{"### Reader registry", journalfile.RdHighWaterOffset, 8, "high water"},
		{"### Reader registry", journalfile.SlClaimOffset, 8, "claim word"},
		{"### Reader registry", journalfile.SlStartOffset, 8, "owner's start identity"},
		{"### Reader registry", journalfile.SlNamespaceOffset, 8, "owner's pid namespace"},
		{"### Reader registry", journalfile.SlPositionOffset, 8, "position"},
		{"### Reader registry", journalfile.SlUpdatedOffset, 8, "updated"},
		{"### Reader registry", journalfile.SlRegisteredOffset, 8, "registered"},
		{"### Reader registry", journalfile.SlNameLenOffset, 4, fmt.Sprintf("name length (at most %d)", journalfile.MaxReaderName)},
		{"### Reader registry", journalfile.SlNameOffset, journalfile.MaxReaderName, "name"},
	}
	for _, r := range rows {
		i := strings.Index(doc, "\n"+r.section+"\n")
		require.GreaterOrEqual(t, i, 0, r.section)
		sec := doc[i+1:]
		if k := strings.Index(sec[1:], "\n### "); k >= 0 {
			sec = sec[:k+1]
		}
		prefix := fmt.Sprintf("| %d | %d | %s", r.offset, r.len, r.field)
		if r.len < 0 {
			prefix = fmt.Sprintf("| %d | length-%d | %s", r.offset, r.offset, r.field)
		}
		require.Contains(t, strings.ReplaceAll(sec, "0X", "0x"), strings.ReplaceAll(prefix, "0X", "0x"), "%s: %s", r.section, r.field)
	}
}
