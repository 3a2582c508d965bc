package journal

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/dutyrt/duty/internal/journalfile"
)

// FuzzInspect gives Inspect a status file, a stream index header and a
// reader registry of arbitrary bytes (what another process, or damage,
// left): never a panic; an error matches ErrCorrupt or ErrVersion; a
// status that reads is the words as stored; a registry that reads gives
// readers with a pid, a name that fits and a position that is a slot.
func FuzzInspect(f *testing.F) {
	status := make([]byte, journalfile.StatusLength)
	copy(status, journalfile.StatusMagic)
	binary.LittleEndian.PutUint32(status[journalfile.StVersionOffset:], journalfile.Version)
	binary.LittleEndian.PutUint32(status[journalfile.StLengthOffset:], journalfile.StatusLength)
	binary.LittleEndian.PutUint64(status[journalfile.StCommittedOffset:], 4096)
	index := make([]byte, journalfile.IndexHeaderLength+2*journalfile.IndexEntryLength)
	copy(index, journalfile.IdxMagic)
	binary.LittleEndian.PutUint32(index[8:], journalfile.Version)
	binary.LittleEndian.PutUint32(index[12:], journalfile.IndexHeaderLength)
	binary.LittleEndian.PutUint32(index[journalfile.IdxStreamOffset:], 3)
	binary.LittleEndian.PutUint32(index[journalfile.IdxEntryLenOffset:], journalfile.IndexEntryLength)
	binary.LittleEndian.PutUint32(index[journalfile.IdxCRCOffset:], crc32.Checksum(index[:journalfile.IdxCRCOffset], journalfile.Castagnoli))
	readers := make([]byte, journalfile.ReadersHeaderLength+2*journalfile.ReaderSlotLength)
	journalfile.PutReadersHeader(readers, 2)
	le := binary.LittleEndian
	le.PutUint64(readers[journalfile.RdHighWaterOffset:], 2)
	s0 := journalfile.ReadersHeaderLength
	le.PutUint64(readers[s0:], journalfile.ClaimWord(uint32(os.Getpid()), journalfile.SlotActive, 1))
	le.PutUint64(readers[s0+journalfile.SlPositionOffset:], 1024)
	le.PutUint32(readers[s0+journalfile.SlNameLenOffset:], 4)
	copy(readers[s0+journalfile.SlNameOffset:], "name")
	s1 := s0 + journalfile.ReaderSlotLength
	le.PutUint64(readers[s1:], journalfile.ClaimWord(1<<22, journalfile.SlotActive, 9)) // a pid no process has
	le.PutUint64(readers[s1+journalfile.SlPositionOffset:], 2048)
	f.Add(status, index, readers)
	f.Add([]byte{}, []byte{}, []byte{})
	f.Add(status[:journalfile.StatusLength-1], index[:journalfile.IndexHeaderLength-1], readers[:journalfile.ReadersHeaderLength])
	bad := append([]byte(nil), index...)
	binary.LittleEndian.PutUint64(bad[journalfile.IdxFirstOffset:], 1<<63)
	garbage := append([]byte(nil), readers...)
	le.PutUint64(garbage[s0:], journalfile.ClaimWord(7, 200, 1)) // unknown state
	le.PutUint32(garbage[s1+journalfile.SlNameLenOffset:], 1000) // name longer than its field
	le.PutUint64(garbage[journalfile.RdHighWaterOffset:], 1<<40) // high water past the slots
	f.Add(append([]byte(nil), status...), bad, garbage)
	wrongSlots := append([]byte(nil), readers...)
	le.PutUint32(wrongSlots[journalfile.RdSlotsOffset:], 3) // the length disagrees (CRC recomputed)
	le.PutUint32(wrongSlots[journalfile.RdCRCOffset:], crc32.Checksum(wrongSlots[:journalfile.RdCRCOffset], journalfile.Castagnoli))
	f.Add(status, index, wrongSlots)
	f.Fuzz(func(t *testing.T, st, idx, rd []byte) {
		dir := fastDir(t)
		if err := os.WriteFile(filepath.Join(dir, journalfile.StatusName), st, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, journalfile.IndexDirName), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, journalfile.IndexDirName, journalfile.IndexName(3)), idx, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, journalfile.ReadersName), rd, 0o644); err != nil {
			t.Fatal(err)
		}
		info, err := journalfile.Inspect(dir)
		for _, r := range info.Readers {
			if r.PID <= 0 || len(r.Name) > journalfile.MaxReaderName || r.Position < 0 && !r.Pending || r.Lag < 0 {
				t.Fatalf("reader %+v accepted", r)
			}
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
				t.Fatalf("error %v matches neither ErrCorrupt nor ErrVersion", err)
			}
			return
		}
		if !info.HasStatus || info.Status.Committed != int64(binary.LittleEndian.Uint64(st[journalfile.StCommittedOffset:])) {
			t.Fatalf("status %+v from %x", info.Status, st)
		}
		if len(info.Streams) != 1 || info.Streams[0].Indexed != int64((len(idx)-journalfile.IndexHeaderLength)/journalfile.IndexEntryLength) {
			t.Fatalf("streams %+v from %d bytes", info.Streams, len(idx))
		}
		if !info.HasReaders {
			t.Fatalf("registry of %d bytes read without error, HasReaders false", len(rd))
		}
	})
}
