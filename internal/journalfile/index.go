package journalfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dutyrt/duty/internal/mmapfile"
)

// IndexEntry is one entry of a stream index.
type IndexEntry struct {
	Position int64 // the record's position in the log
	Length   int32 // header and body
	TypeID   int32
}

// IndexFile is one stream's index file.
type IndexFile struct {
	f       *os.File
	First   int64 // sequence of entry 0
	Count   int64 // entries in the file
	trimmed int64 // entries before this one are zeros, their blocks freed (trim)
}

// next is the sequence of the stream's next entry.
func (f *IndexFile) Next() int64 { return f.First + f.Count }

// OpenIndexFile opens path, stream's index file, read-only, and checks its
// header. A missing or short file is an error matching os.ErrNotExist or
// io.ErrUnexpectedEOF; a header this package does not write, ErrCorrupt or
// ErrVersion.
func OpenIndexFile(path string, stream uint32, writable bool) (*IndexFile, error) {
	flag := os.O_RDONLY
	if writable {
		flag = os.O_RDWR
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, fmt.Errorf("journal: index: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("journal: index: %w", err)
	}
	var hdr [IndexHeaderLength]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		f.Close()
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("journal: index %s: header: %w", path, err)
	}
	first, err := CheckIndexHeader(hdr[:], stream)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("index %s: %w", path, err)
	}
	return &IndexFile{f: f, First: first, Count: (fi.Size() - IndexHeaderLength) / IndexEntryLength}, nil
}

// entry reads entry n of the file.
func (f *IndexFile) Entry(n int64) (IndexEntry, error) {
	var b [IndexEntryLength]byte
	if _, err := f.f.ReadAt(b[:], IndexHeaderLength+n*IndexEntryLength); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return IndexEntry{}, fmt.Errorf("journal: index: %w", err)
	}
	le := binary.LittleEndian
	return IndexEntry{Position: int64(le.Uint64(b[0:])), Length: int32(le.Uint32(b[8:])), TypeID: int32(le.Uint32(b[12:]))}, nil
}

// close closes the file.
func (f *IndexFile) Close() error { return f.f.Close() }

// IndexFiles is a writer's stream index files in one directory: it
// appends entries in batches (one write per stream per batch, then the
// position file), trims them behind retention and rebuilds them from
// scratch. It is not safe for concurrent use.
type IndexFiles struct {
	Dir    string
	Files  map[uint32]*IndexFile
	batch  map[uint32][]byte // entries added, not yet written
	pos    *os.File          // the position file, opened at its first write
	posBuf [checkpointLength]byte
	// damaged: the position file is gone and is not written again, so
	// that the next writer's Open rebuilds the indexes.
	damaged bool
}

// IdxPosName is the index position file's name.
const IdxPosName = "position"

// listIndexDir returns the stream index files of dir by stream, whether
// the position file is there, and the entries that are neither (foreign:
// left alone, reported by their paths).
func listIndexDir(dir string) (streams map[uint32]string, hasPos bool, foreign []string, err error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, false, nil, fmt.Errorf("journal: index: %w", err)
	}
	streams = map[uint32]string{}
	for _, e := range ents {
		name := e.Name()
		switch id, ok := parseIndexName(name); {
		case !e.Type().IsRegular():
			foreign = append(foreign, filepath.Join(dir, name))
		case name == IdxPosName:
			hasPos = true
		case ok:
			streams[id] = name
		default:
			foreign = append(foreign, filepath.Join(dir, name))
		}
	}
	return streams, hasPos, foreign, nil
}

// parseIndexName returns the stream a stream index file's name
// (IndexName) encodes.
func parseIndexName(name string) (uint32, bool) {
	id, ok := strings.CutSuffix(name, ".idx")
	if !ok || len(id) != 10 {
		return 0, false
	}
	v, err := strconv.ParseUint(id, 10, 32)
	return uint32(v), err == nil
}

// OpenIndexFiles makes dir if needed and returns its index files, none
// opened yet, and the foreign entries it holds.
func OpenIndexFiles(dir string) (*IndexFiles, []string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("journal: index: %w", err)
	}
	_, _, foreign, err := listIndexDir(dir)
	if err != nil {
		return nil, nil, err
	}
	return &IndexFiles{Dir: dir, Files: map[uint32]*IndexFile{}, batch: map[uint32][]byte{}}, foreign, nil
}

// load opens the existing index files and returns the position the
// position file says they are written up to (segSize: the journal's);
// ok is false when they cannot be trusted.
func (x *IndexFiles) Load(segSize int64) (from int64, ok bool) {
	b, err := os.ReadFile(filepath.Join(x.Dir, IdxPosName))
	if err != nil {
		return 0, false
	}
	from, _, err = decodeFramed(b, IdxPosMagic, segSize)
	if err != nil {
		return 0, false
	}
	streams, _, _, err := listIndexDir(x.Dir)
	if err != nil {
		return 0, false
	}
	for id, name := range streams {
		f, err := OpenIndexFile(filepath.Join(x.Dir, name), id, true)
		if err != nil {
			return 0, false
		}
		x.Files[id] = f
	}
	return from, true
}

// reset removes every index file (before a rebuild); foreign files stay.
func (x *IndexFiles) Reset() error {
	for _, f := range x.Files {
		f.Close()
	}
	x.Files = map[uint32]*IndexFile{}
	clear(x.batch)
	if x.pos != nil {
		x.pos.Close()
		x.pos = nil
	}
	streams, hasPos, _, err := listIndexDir(x.Dir)
	if err != nil {
		return err
	}
	if hasPos {
		streams[^uint32(0)] = IdxPosName // not a stream index's name: no clash
	}
	for _, name := range streams {
		if err := os.Remove(filepath.Join(x.Dir, name)); err != nil {
			return fmt.Errorf("journal: index: %w", err)
		}
	}
	return nil
}

// ErrIndexGap: a record's sequence is past its stream index's next entry,
// so entries are missing.
var ErrIndexGap = errors.New("journal: index behind with a gap")

// add batches the entry of record seq of stream, at position, of length
// (header and body) and typeID. A record already indexed (before the
// position file was written) is passed over: added is false. A sequence
// past the stream's next entry is ErrIndexGap.
func (x *IndexFiles) Add(stream uint32, seq, position int64, length, typeID int32) (added bool, err error) {
	f, err := x.file(stream, seq)
	if err != nil {
		return false, err
	}
	next := f.Next() + int64(len(x.batch[stream])/IndexEntryLength)
	switch {
	case seq < next:
		return false, nil
	case seq > next:
		return false, fmt.Errorf("%w: stream %d record %d, index at %d", ErrIndexGap, stream, seq, next)
	}
	var e [IndexEntryLength]byte
	le := binary.LittleEndian
	le.PutUint64(e[0:], uint64(position))
	le.PutUint32(e[8:], uint32(length))
	le.PutUint32(e[12:], uint32(typeID))
	x.batch[stream] = append(x.batch[stream], e[:]...)
	return true, nil
}

// file returns stream's index file, creating it with first sequence seq.
func (x *IndexFiles) file(stream uint32, seq int64) (*IndexFile, error) {
	if f := x.Files[stream]; f != nil {
		return f, nil
	}
	path := filepath.Join(x.Dir, IndexName(stream))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("journal: index: %w", err)
	}
	var hdr [IndexHeaderLength]byte
	le := binary.LittleEndian
	copy(hdr[:], IdxMagic)
	le.PutUint32(hdr[8:], Version)
	le.PutUint32(hdr[12:], IndexHeaderLength)
	le.PutUint32(hdr[IdxStreamOffset:], stream)
	le.PutUint32(hdr[IdxEntryLenOffset:], IndexEntryLength)
	le.PutUint64(hdr[IdxFirstOffset:], uint64(seq))
	le.PutUint32(hdr[IdxCRCOffset:], crc32.Checksum(hdr[:IdxCRCOffset], Castagnoli))
	if _, err := f.WriteAt(hdr[:], 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal: index: %w", err)
	}
	xf := &IndexFile{f: f, First: seq}
	x.Files[stream] = xf
	return xf, nil
}

// WriteBatch writes the batched entries (one write per stream), then
// upTo, the log position they reach, into the position file (segSize and
// now framing it as a checkpoint's). Entries are written before the
// position, so after a crash the position never claims entries that are
// not there; entries past it are recognised and passed over when
// indexing resumes.
func (x *IndexFiles) WriteBatch(segSize, upTo, now int64) error {
	wrote := false
	for stream, b := range x.batch {
		if len(b) == 0 {
			continue
		}
		f := x.Files[stream]
		if _, err := f.f.WriteAt(b, IndexHeaderLength+f.Count*IndexEntryLength); err != nil {
			return fmt.Errorf("journal: index: %w", err)
		}
		f.Count += int64(len(b) / IndexEntryLength)
		x.batch[stream] = b[:0]
		wrote = true
	}
	if !wrote || x.damaged {
		return nil
	}
	if x.pos == nil {
		f, err := os.OpenFile(filepath.Join(x.Dir, IdxPosName), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("journal: index: %w", err)
		}
		x.pos = f
	}
	// Rewritten in place, always the same length: the Flusher's indexing
	// allocates nothing per batch. A torn write fails its CRC at the next
	// Open, which then rebuilds the indexes.
	putFramed(&x.posBuf, IdxPosMagic, segSize, upTo, now, 0)
	if _, err := x.pos.WriteAt(x.posBuf[:], 0); err != nil {
		return fmt.Errorf("journal: index: %w", err)
	}
	return nil
}

// MarkDamaged removes the position file and writes it no more: the next
// writer's Open rebuilds the indexes. It reports whether they were not
// marked already.
func (x *IndexFiles) MarkDamaged() bool {
	if x.damaged {
		return false
	}
	x.damaged = true
	_ = os.Remove(filepath.Join(x.Dir, IdxPosName))
	return true
}

// indexBlock is the unit trim frees: a file system block on common
// Linux file systems, and a page.
const indexBlock = 4096

// trim frees the disk blocks that hold only entries of records before
// first (the log's first kept position, after retention), in every stream
// index: the entries become zeros in place (fallocate PUNCH_HOLE), so
// entry n stays at its offset and the file keeps its layout, and a Lookup
// of such a record finds a position before first, ErrBehindRetention, as
// before. Entries are in position order, so the dead ones are a prefix,
// found by binary search. Where the file system cannot punch holes,
// nothing is trimmed (the entries stay, as they would without trim).
func (x *IndexFiles) Trim(first int64) error {
	for _, f := range x.Files {
		lo, hi := f.trimmed, f.Count // the first entry at or after first is in [lo, hi]
		for lo < hi {
			mid := lo + (hi-lo)/2
			e, err := f.Entry(mid)
			if err != nil {
				return err
			}
			if e.Position < first {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		from := IndexHeaderLength + f.trimmed*IndexEntryLength
		to := (IndexHeaderLength + lo*IndexEntryLength) &^ (indexBlock - 1)
		if to <= from {
			continue
		}
		err := mmapfile.PunchHole(int(f.f.Fd()), from, to-from)
		if errors.Is(err, mmapfile.ErrUnsupported) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("journal: index: trim: %w", err)
		}
		f.trimmed = (to - IndexHeaderLength) / IndexEntryLength
	}
	return nil
}

// close syncs the index files and closes them.
func (x *IndexFiles) Close() error {
	var err error
	for _, f := range x.Files {
		if serr := f.f.Sync(); err == nil {
			err = serr
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	x.Files = nil
	if x.pos != nil {
		if cerr := x.pos.Close(); err == nil {
			err = cerr
		}
		x.pos = nil
	}
	return err
}
