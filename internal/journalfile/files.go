package journalfile

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
)

// Stream index layout: per stream, index/SSSSSSSSSS.idx (the stream id,
// zero-padded to 10 digits): a header, then one fixed-size entry per record
// of the stream, entry n for sequence firstSequence+n, so that the Nth
// record is found with one read.
//
//	header                           entry
//	offset  size  field              offset  size  field
//	0       8     magic "DUTYJIDX"   0       8     record position
//	8       4     version            8       4     record length (header and body)
//	12      4     header length (64) 12      4     type id
//	16      4     stream id
//	20      4     entry length (16)
//	24      8     first sequence
//	32      4     CRC32C of 0..31
//	36      28    zero
//
// index/position holds the log position up to which every stream's
// entries have been written (same framing as the checkpoint: magic
// "DUTYJIXP", version, length 64, segment size, position, time, CRC32C of
// 0..39).
const (
	IndexHeaderLength = 64
	IndexEntryLength  = 16
	IdxMagic          = "DUTYJIDX"
	IdxPosMagic       = "DUTYJIXP"
	IndexDirName      = "index"
	IdxStreamOffset   = 16
	IdxEntryLenOffset = 20
	IdxFirstOffset    = 24
	IdxCRCOffset      = 32
)

func IndexName(stream uint32) string { return fmt.Sprintf("%010d.idx", stream) }

func CheckIndexHeader(b []byte, stream uint32) (first int64, err error) {
	le := binary.LittleEndian
	switch {
	case string(b[:8]) != IdxMagic:
		return 0, fmt.Errorf("%w: index magic %q", ErrCorrupt, b[:8])
	case le.Uint32(b[8:]) != Version:
		return 0, fmt.Errorf("%w: index version %d", ErrVersion, le.Uint32(b[8:]))
	case crc32.Checksum(b[:IdxCRCOffset], Castagnoli) != le.Uint32(b[IdxCRCOffset:]):
		return 0, fmt.Errorf("%w: index header CRC", ErrCorrupt)
	case le.Uint32(b[IdxStreamOffset:]) != stream || le.Uint32(b[IdxEntryLenOffset:]) != IndexEntryLength:
		return 0, fmt.Errorf("%w: index header of stream %d", ErrCorrupt, le.Uint32(b[IdxStreamOffset:]))
	}
	first = int64(le.Uint64(b[IdxFirstOffset:]))
	if first < 0 {
		return 0, fmt.Errorf("%w: index first sequence %d", ErrCorrupt, first)
	}
	return first, nil
}

// LockName is the writer lock file in the journal's directory.
const LockName = "journal.lock"

// ListSegments returns the start positions of the segment files in dir,
// sorted. A writer removes leftover temporary files of an interrupted
// segment creation.
func ListSegments(dir string, writer bool) ([]int64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	var starts []int64
	for _, e := range ents {
		name := e.Name()
		if writer && filepath.Ext(name) == ".tmp" {
			_ = os.Remove(filepath.Join(dir, name))
			continue
		}
		if st, ok := ParseSegmentName(name); ok && e.Type().IsRegular() {
			starts = append(starts, st)
		}
	}
	sort.Slice(starts, func(a, b int) bool { return starts[a] < starts[b] })
	return starts, nil
}
