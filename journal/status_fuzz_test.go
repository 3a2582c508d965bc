package journal

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

// FuzzInspect gives Inspect a status file, a stream index header and a
// reader registry of arbitrary bytes (what another process, or damage,
// left): never a panic; an error matches ErrCorrupt or ErrVersion; a
// status that reads is the words as stored; a registry that reads gives
// readers with a pid, a name that fits and a position that is a slot.
func FuzzInspect(f *testing.F) {
	status := make([]byte, statusLength)
	copy(status, statusMagic)
	binary.LittleEndian.PutUint32(status[stVersionOffset:], version)
	binary.LittleEndian.PutUint32(status[stLengthOffset:], statusLength)
	binary.LittleEndian.PutUint64(status[stCommittedOffset:], 4096)
	index := make([]byte, indexHeaderLength+2*indexEntryLength)
	copy(index, idxMagic)
	binary.LittleEndian.PutUint32(index[8:], version)
	binary.LittleEndian.PutUint32(index[12:], indexHeaderLength)
	binary.LittleEndian.PutUint32(index[idxStreamOffset:], 3)
	binary.LittleEndian.PutUint32(index[idxEntryLenOffset:], indexEntryLength)
	binary.LittleEndian.PutUint32(index[idxCRCOffset:], crc32.Checksum(index[:idxCRCOffset], castagnoli))
	readers := make([]byte, readersHeaderLength+2*readerSlotLength)
	putReadersHeader(readers, 2)
	le := binary.LittleEndian
	le.PutUint64(readers[rdHighWaterOffset:], 2)
	s0 := readersHeaderLength
	le.PutUint64(readers[s0:], claimWord(uint32(os.Getpid()), slotActive, 1))
	le.PutUint64(readers[s0+slPositionOffset:], 1024)
	le.PutUint32(readers[s0+slNameLenOffset:], 4)
	copy(readers[s0+slNameOffset:], "name")
	s1 := s0 + readerSlotLength
	le.PutUint64(readers[s1:], claimWord(1<<22, slotActive, 9)) // a pid no process has
	le.PutUint64(readers[s1+slPositionOffset:], 2048)
	f.Add(status, index, readers)
	f.Add([]byte{}, []byte{}, []byte{})
	f.Add(status[:statusLength-1], index[:indexHeaderLength-1], readers[:readersHeaderLength])
	bad := append([]byte(nil), index...)
	binary.LittleEndian.PutUint64(bad[idxFirstOffset:], 1<<63)
	garbage := append([]byte(nil), readers...)
	le.PutUint64(garbage[s0:], claimWord(7, 200, 1)) // unknown state
	le.PutUint32(garbage[s1+slNameLenOffset:], 1000) // name longer than its field
	le.PutUint64(garbage[rdHighWaterOffset:], 1<<40) // high water past the slots
	f.Add(append([]byte(nil), status...), bad, garbage)
	wrongSlots := append([]byte(nil), readers...)
	le.PutUint32(wrongSlots[rdSlotsOffset:], 3) // the length disagrees (CRC recomputed)
	le.PutUint32(wrongSlots[rdCRCOffset:], crc32.Checksum(wrongSlots[:rdCRCOffset], castagnoli))
	f.Add(status, index, wrongSlots)
	f.Fuzz(func(t *testing.T, st, idx, rd []byte) {
		dir := fastDir(t)
		if err := os.WriteFile(filepath.Join(dir, statusName), st, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, indexDirName), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, indexDirName, indexName(3)), idx, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, readersName), rd, 0o644); err != nil {
			t.Fatal(err)
		}
		info, err := Inspect(dir)
		for _, r := range info.Readers {
			if r.PID <= 0 || len(r.Name) > maxReaderName || r.Position < 0 && !r.Pending || r.Lag < 0 {
				t.Fatalf("reader %+v accepted", r)
			}
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
				t.Fatalf("error %v matches neither ErrCorrupt nor ErrVersion", err)
			}
			return
		}
		if !info.HasStatus || info.Status.Committed != int64(binary.LittleEndian.Uint64(st[stCommittedOffset:])) {
			t.Fatalf("status %+v from %x", info.Status, st)
		}
		if len(info.Streams) != 1 || info.Streams[0].Indexed != int64((len(idx)-indexHeaderLength)/indexEntryLength) {
			t.Fatalf("streams %+v from %d bytes", info.Streams, len(idx))
		}
		if !info.HasReaders {
			t.Fatalf("registry of %d bytes read without error, HasReaders false", len(rd))
		}
	})
}
