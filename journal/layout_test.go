package journal

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The layout constants are the single source of the byte layouts; the
// tables of docs/journal.md must state the same offsets.
func TestLayoutMatchesTheDocs(t *testing.T) {
	require.Zero(t, recordHeaderLength%recordAlignment)
	require.Zero(t, segmentHeaderLength%recordAlignment)
	require.Zero(t, MinSegmentSize%(1<<12), "segments are whole pages")
	require.Equal(t, recordHeaderLength, timestampOffset+8)
	require.Equal(t, endMarkerLength, magicOffset+4)
	require.Equal(t, uint32(version), uint32(recordMagic&^magicMask))
	require.Equal(t, uint32(version), uint32(endMagic&^magicMask))
	require.Equal(t, uint32(version), uint32(padMagic&^magicMask))

	b, err := os.ReadFile("../docs/journal.md")
	require.NoError(t, err)
	doc := string(b)
	rows := []struct {
		section     string
		offset, len int
		field       string
	}{
		{"### Segment header", segMagicOffset, 8, "magic `" + segMagic + "`"},
		{"### Segment header", segSizeOffset, 8, "segment size"},
		{"### Segment header", segStartOffset, 8, "start position"},
		{"### Segment header", segCreatedOffset, 8, "creation time"},
		{"### Segment header", segCRCOffset, 4, "CRC32C of bytes 0..39"},
		{"### Record", lengthOffset, 4, "length of header and body"},
		{"### Record", magicOffset, 4, fmt.Sprintf("magic and version: `%#08X`", recordMagic)},
		{"### Record", crcOffset, 4, "CRC32C (Castagnoli)"},
		{"### Record", streamOffset, 4, "stream id"},
		{"### Record", typeOffset, 4, "type id"},
		{"### Record", flagsOffset, 4, "flags"},
		{"### Record", sequenceOffset, 8, "sequence number"},
		{"### Record", timestampOffset, 8, "timestamp"},
		{"### Record", recordHeaderLength, -1, "body"},
		{"### Checkpoint", ckptSizeOffset, 8, "segment size"},
		{"### Checkpoint", ckptFlushed, 8, "flushed position"},
		{"### Checkpoint", ckptTime, 8, "time written"},
		{"### Checkpoint", ckptFlags, 4, "flags"},
		{"### Checkpoint", ckptCRC, 4, "CRC32C of bytes 0..43"},
		{"### Checkpoint", ckptFirst, 8, "first segment"},
		{"### Checkpoint", ckptFirstCRC, 4, "CRC32C of bytes 0..55"},
		{"### Stream index", idxStreamOffset, 4, "stream id"},
		{"### Stream index", idxEntryLenOffset, 4, "entry length (16)"},
		{"### Stream index", idxFirstOffset, 8, "first sequence"},
		{"### Stream index", idxCRCOffset, 4, "CRC32C of bytes 0..31"},
		{"### Status file", 0, 8, "magic `" + statusMagic + "`"},
		{"### Status file", stVersionOffset, 4, "layout version"},
		{"### Status file", stLengthOffset, 4, fmt.Sprintf("length (%d)", statusLength)},
		{"### Status file", stCommittedOffset, 8, "committed position"},
		{"### Status file", stFlushedOffset, 8, "flushed position"},
		{"### Status file", stTailersOffset, 8, "registered Tailers"},
		{"### Status file", stSegmentsOffset, 8, "segments in the journal"},
		{"### Status file", stUpdatedOffset, 8, "updated"},
		{"### Status file", stWriterPIDOffset, 8, "writer's process id"},
		{"### Reader registry", 0, 8, "magic `" + readersMagic + "`"},
		{"### Reader registry", rdVersionOffset, 4, "layout version"},
		{"### Reader registry", rdHeaderLenOffset, 4, fmt.Sprintf("header length (%d)", readersHeaderLength)},
		{"### Reader registry", rdSlotLenOffset, 4, fmt.Sprintf("slot length (%d)", readerSlotLength)},
		{"### Reader registry", rdSlotsOffset, 4, "slots"},
		{"### Reader registry", rdCRCOffset, 4, "CRC32C of bytes 0..23"},
		{"### Reader registry", rdProposedOffset, 8, "proposed floor"},
		{"### Reader registry", rdFloorOffset, 8, "floor"},
		{"### Reader registry", rdHighWaterOffset, 8, "high water"},
		{"### Reader registry", slClaimOffset, 8, "claim word"},
		{"### Reader registry", slStartOffset, 8, "owner's start identity"},
		{"### Reader registry", slNamespaceOffset, 8, "owner's pid namespace"},
		{"### Reader registry", slPositionOffset, 8, "position"},
		{"### Reader registry", slUpdatedOffset, 8, "updated"},
		{"### Reader registry", slRegisteredOffset, 8, "registered"},
		{"### Reader registry", slNameLenOffset, 4, fmt.Sprintf("name length (at most %d)", maxReaderName)},
		{"### Reader registry", slNameOffset, maxReaderName, "name"},
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
