package journal

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

// FuzzInspect gives Inspect a status file and a stream index header of
// arbitrary bytes (what another process, or damage, left): never a panic;
// an error matches ErrCorrupt or ErrVersion; a status that reads is the
// words as stored.
func FuzzInspect(f *testing.F) {
	status := make([]byte, StatusLength)
	copy(status, statusMagic)
	binary.LittleEndian.PutUint32(status[stVersionOffset:], Version)
	binary.LittleEndian.PutUint32(status[stLengthOffset:], StatusLength)
	binary.LittleEndian.PutUint64(status[stCommittedOffset:], 4096)
	index := make([]byte, IndexHeaderLength+2*IndexEntryLength)
	copy(index, idxMagic)
	binary.LittleEndian.PutUint32(index[8:], Version)
	binary.LittleEndian.PutUint32(index[12:], IndexHeaderLength)
	binary.LittleEndian.PutUint32(index[idxStreamOffset:], 3)
	binary.LittleEndian.PutUint32(index[idxEntryLenOffset:], IndexEntryLength)
	binary.LittleEndian.PutUint32(index[idxCRCOffset:], crc32.Checksum(index[:idxCRCOffset], castagnoli))
	f.Add(status, index)
	f.Add([]byte{}, []byte{})
	f.Add(status[:StatusLength-1], index[:IndexHeaderLength-1])
	bad := append([]byte(nil), index...)
	binary.LittleEndian.PutUint64(bad[idxFirstOffset:], 1<<63)
	f.Add(append([]byte(nil), status...), bad)
	f.Fuzz(func(t *testing.T, st, idx []byte) {
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
		info, err := Inspect(dir)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
				t.Fatalf("error %v matches neither ErrCorrupt nor ErrVersion", err)
			}
			return
		}
		if !info.HasStatus || info.Status.Committed != int64(binary.LittleEndian.Uint64(st[stCommittedOffset:])) {
			t.Fatalf("status %+v from %x", info.Status, st)
		}
		if len(info.Streams) != 1 || info.Streams[0].Indexed != int64((len(idx)-IndexHeaderLength)/IndexEntryLength) {
			t.Fatalf("streams %+v from %d bytes", info.Streams, len(idx))
		}
	})
}
