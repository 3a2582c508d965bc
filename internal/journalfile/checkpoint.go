package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"

	"github.com/dutyrt/duty/internal/journalfile"
	"github.com/dutyrt/duty/internal/mmapfile"
)

// Checkpoint file layout: the position up to which the log was durable
// when it was written. It is replaced atomically (written to a temporary
// file, synced, renamed over the old one, directory synced), so it is
// either the old or the new one, never torn.
//
//	offset  size  field
//	0       8     magic "DUTYJCKP"
//	8       4     layout version (version)
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
	ckptName         = "checkpoint"
	ckptSizeOffset   = 16
	ckptFlushed      = 24
	ckptTime         = 32
	ckptFlags        = 40
	ckptCRC          = 44
	ckptFirst        = 48
	ckptFirstCRC     = 56

	// ckptClean marks a checkpoint written by Close: the log ends at its
	// position and every byte after it is zero, so Open need not check.
	ckptClean = 1
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
	le.PutUint32(b[8:], journalfile.Version)
	le.PutUint32(b[12:], checkpointLength)
	le.PutUint64(b[ckptSizeOffset:], uint64(segSize))
	le.PutUint64(b[ckptFlushed:], uint64(pos))
	le.PutUint64(b[ckptTime:], uint64(now))
	le.PutUint32(b[ckptFlags:], flags)
	le.PutUint32(b[ckptCRC:], crc32.Checksum(b[:ckptCRC], journalfile.Castagnoli))
}

// writeCheckpoint records flushed as durable, and the journal's oldest
// segment. Call it only once the log is durable up to flushed, with
// flushMu held or before any other goroutine runs (it takes j.mu).
func (j *Journal) writeCheckpoint(flushed int64, flags uint32) error {
	b := encodeFramed(ckptMagic, j.segSize, flushed, j.opts.Clock(), flags)
	j.mu.Lock()
	first := j.first()
	j.mu.Unlock()
	binary.LittleEndian.PutUint64(b[ckptFirst:], uint64(first))
	binary.LittleEndian.PutUint32(b[ckptFirstCRC:], crc32.Checksum(b[:ckptFirstCRC], journalfile.Castagnoli))
	path := filepath.Join(j.dir, ckptName)
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
		err = mmapfile.SyncDir(j.dir)
	}
	if err != nil {
		return fmt.Errorf("journal: checkpoint: %w", err)
	}
	return nil
}

// readCheckpoint returns the checkpoint's flushed position and flags;
// found is false when there is none.
func readCheckpoint(dir string, segSize int64) (flushed int64, flags uint32, found bool, err error) {
	c, err := loadCheckpoint(dir, segSize)
	return c.flushed, c.flags, c.found, err
}

// checkpoint is a decoded checkpoint file.
type checkpoint struct {
	flushed int64
	flags   uint32
	found   bool  // there is a checkpoint file
	first   int64 // the oldest segment's start when written; -1: not recorded
}

// loadCheckpoint reads and checks the checkpoint file.
func loadCheckpoint(dir string, segSize int64) (checkpoint, error) {
	c := checkpoint{first: -1}
	path := filepath.Join(dir, ckptName)
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
	if fc := le.Uint32(b[ckptFirstCRC:]); fc != 0 {
		first := int64(le.Uint64(b[ckptFirst:]))
		if fc != crc32.Checksum(b[:ckptFirstCRC], journalfile.Castagnoli) || first < 0 || first&(segSize-1) != 0 {
			return c, fmt.Errorf("%s: %w: checkpoint first segment %d, CRC %#08x", path, ErrCorrupt, first, fc)
		}
		c.first = first
	}
	c.flushed, c.flags, c.found = flushed, flags, true
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
	case le.Uint32(b[8:]) != journalfile.Version:
		return 0, 0, fmt.Errorf("%w: checkpoint version %d, want %d", ErrVersion, le.Uint32(b[8:]), journalfile.Version)
	case crc32.Checksum(b[:ckptCRC], journalfile.Castagnoli) != le.Uint32(b[ckptCRC:]):
		return 0, 0, fmt.Errorf("%w: checkpoint CRC", ErrCorrupt)
	case int64(le.Uint64(b[ckptSizeOffset:])) != segSize:
		return 0, 0, fmt.Errorf("%w: checkpoint segment size %d, the journal's is %d", ErrCorrupt, le.Uint64(b[ckptSizeOffset:]), segSize)
	}
	pos := int64(le.Uint64(b[ckptFlushed:]))
	if pos < 0 || pos&(journalfile.RecordAlignment-1) != 0 {
		return 0, 0, fmt.Errorf("%w: checkpoint position %d", ErrCorrupt, pos)
	}
	return pos, le.Uint32(b[ckptFlags:]), nil
}
