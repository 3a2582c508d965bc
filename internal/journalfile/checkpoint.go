package journalfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"

	"github.com/dutyrt/duty/internal/mmapfile"
)

// Checkpoint file layout: the position up to which the log was durable
// when it was written. It is replaced atomically (written to a temporary
// file, synced, renamed over the old one, directory synced), so it is
// either the old or the new one, never torn.
//
//	offset  size  field
//	0       8     magic "DUTYJCKP"
//	8       4     layout version (Version)
//	12      4     checkpoint length (checkpointLength)
//	16      8     segment size
//	24      8     flushed position
//	32      8     time written, ns since the Unix epoch
//	40      4     flags: 1 = written by Close (the log ends exactly here)
//	44      4     CRC32C of bytes 0..43
//	48      8     first segment: the oldest segment's start when written
//	56      4     CRC32C of bytes 0..55 (0: no first segment recorded)
//	60      4     zero
//
// The first segment is recorded before retention deletes anything, so a
// log whose oldest file starts past it lost segments some other way. It
// is an extension within version 1: a checkpoint written without it has
// zeros there, and readers of bytes 0..47 alone still read it.
const (
	checkpointLength = 64
	ckptMagic        = "DUTYJCKP"
	CkptName         = "checkpoint"
	CkptSizeOffset   = 16
	CkptFlushed      = 24
	CkptTime         = 32
	CkptFlags        = 40
	CkptCRC          = 44
	CkptFirst        = 48
	CkptFirstCRC     = 56

	// CkptClean marks a checkpoint written by Close: the log ends at its
	// position and every byte after it is zero, so Open need not check.
	CkptClean = 1
)

// encodeFramed encodes the 64-byte framing shared by the checkpoint and
// the index position file.
func encodeFramed(magic string, segSize, pos, now int64, flags uint32) [checkpointLength]byte {
	var b [checkpointLength]byte
	putFramed(&b, magic, segSize, pos, now, flags)
	return b
}

// putFramed is encodeFramed into b (which the CRC's assembly makes escape:
// the Flusher's indexing passes a buffer of its own, so as not to
// allocate).
func putFramed(b *[checkpointLength]byte, magic string, segSize, pos, now int64, flags uint32) {
	*b = [checkpointLength]byte{}
	le := binary.LittleEndian
	copy(b[:], magic)
	le.PutUint32(b[8:], Version)
	le.PutUint32(b[12:], checkpointLength)
	le.PutUint64(b[CkptSizeOffset:], uint64(segSize))
	le.PutUint64(b[CkptFlushed:], uint64(pos))
	le.PutUint64(b[CkptTime:], uint64(now))
	le.PutUint32(b[CkptFlags:], flags)
	le.PutUint32(b[CkptCRC:], crc32.Checksum(b[:CkptCRC], Castagnoli))
}

// WriteCheckpoint writes dir's checkpoint: durable up to flushed, the
// oldest segment starting at first, written at now (ns), with flags. It
// writes a temporary file, syncs it, renames it over the checkpoint and
// syncs the directory: a checkpoint is the old one or the new one, never
// torn. Call it only once the log is durable up to flushed.
func WriteCheckpoint(dir string, segSize, flushed, first, now int64, flags uint32) error {
	b := encodeFramed(ckptMagic, segSize, flushed, now, flags)
	binary.LittleEndian.PutUint64(b[CkptFirst:], uint64(first))
	binary.LittleEndian.PutUint32(b[CkptFirstCRC:], crc32.Checksum(b[:CkptFirstCRC], Castagnoli))
	path := filepath.Join(dir, CkptName)
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("journal: checkpoint: %w", err)
	}
	_, err = f.Write(b[:])
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = mmapfile.SyncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("journal: checkpoint: %w", err)
	}
	return nil
}

// ReadCheckpoint returns the checkpoint's flushed position and flags;
// found is false when there is none.
func ReadCheckpoint(dir string, segSize int64) (flushed int64, flags uint32, found bool, err error) {
	c, err := LoadCheckpoint(dir, segSize)
	return c.Flushed, c.Flags, c.Found, err
}

// checkpoint is a decoded checkpoint file.
type Checkpoint struct {
	Flushed int64
	Flags   uint32
	Found   bool  // there is a checkpoint file
	First   int64 // the oldest segment's start when written; -1: not recorded
}

// LoadCheckpoint reads and checks the checkpoint file.
func LoadCheckpoint(dir string, segSize int64) (Checkpoint, error) {
	c := Checkpoint{First: -1}
	path := filepath.Join(dir, CkptName)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("journal: checkpoint: %w", err)
	}
	flushed, flags, err := decodeFramed(b, ckptMagic, segSize)
	if err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	le := binary.LittleEndian
	if fc := le.Uint32(b[CkptFirstCRC:]); fc != 0 {
		first := int64(le.Uint64(b[CkptFirst:]))
		if fc != crc32.Checksum(b[:CkptFirstCRC], Castagnoli) || first < 0 || first&(segSize-1) != 0 {
			return c, fmt.Errorf("%s: %w: checkpoint first segment %d, CRC %#08x", path, ErrCorrupt, first, fc)
		}
		c.First = first
	}
	c.Flushed, c.Flags, c.Found = flushed, flags, true
	return c, nil
}

// decodeFramed checks a checkpoint (or index position) file's bytes and
// returns its position and flags.
func decodeFramed(b []byte, magic string, segSize int64) (int64, uint32, error) {
	le := binary.LittleEndian
	switch {
	case len(b) != checkpointLength:
		return 0, 0, fmt.Errorf("%w: checkpoint of %d bytes, want %d", ErrCorrupt, len(b), checkpointLength)
	case string(b[:8]) != magic:
		return 0, 0, fmt.Errorf("%w: checkpoint magic %q", ErrCorrupt, b[:8])
	case le.Uint32(b[8:]) != Version:
		return 0, 0, fmt.Errorf("%w: checkpoint version %d, want %d", ErrVersion, le.Uint32(b[8:]), Version)
	case crc32.Checksum(b[:CkptCRC], Castagnoli) != le.Uint32(b[CkptCRC:]):
		return 0, 0, fmt.Errorf("%w: checkpoint CRC", ErrCorrupt)
	case int64(le.Uint64(b[CkptSizeOffset:])) != segSize:
		return 0, 0, fmt.Errorf("%w: checkpoint segment size %d, the journal's is %d", ErrCorrupt, le.Uint64(b[CkptSizeOffset:]), segSize)
	}
	pos := int64(le.Uint64(b[CkptFlushed:]))
	if pos < 0 || pos&(RecordAlignment-1) != 0 {
		return 0, 0, fmt.Errorf("%w: checkpoint position %d", ErrCorrupt, pos)
	}
	return pos, le.Uint32(b[CkptFlags:]), nil
}
