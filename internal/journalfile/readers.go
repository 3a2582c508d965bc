package journalfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/dutyrt/duty/internal/procinfo"

	"github.com/dutyrt/duty/internal/mmapfile"
)

// Reader registry layout: "readers" in the journal's directory, a header
// and a fixed number of slots, mapped read-write by every process with a
// Tailer (the writer's too) and read-only by Inspect. A Tailer takes a
// slot at NewTailer and frees it at Close; a slot whose owner process is
// dead is reclaimed by whoever finds it so. The writer's retention never
// deletes a segment at or after the lowest position of a live slot, short
// of Options.HardLimitBytes. docs/journal.md, "Reader registry" has the
// tables, the liveness rule and the protocol.
//
//	header  offset  size  field
//	        0       8     magic "DUTYJRDR"
//	        8       4     layout version (Version)
//	        12      4     header length (ReadersHeaderLength)
//	        16      4     slot length (ReaderSlotLength)
//	        20      4     slots
//	        24      4     CRC32C of bytes 0..23
//	        32      8     proposed floor: where retention means to cut (writer)
//	        40      8     floor: segments before it are deleted or being deleted (writer)
//	        48      8     high water: slots ever claimed are below it
//
//	slot    offset  size  field
//	        0       8     claim word: pid (bits 0-31), state (bits 32-39), generation (bits 40-63)
//	        8       8     owner's start identity (Linux: /proc/<pid>/stat field 22; 0 unknown)
//	        16      8     owner's pid namespace (Linux: inode of /proc/self/ns/pid; 0 unknown)
//	        24      8     position: the next record the reader reads
//	        32      8     updated, ns since the Unix epoch
//	        40      8     registered, ns since the Unix epoch
//	        48      4     name length
//	        52      76    name (UTF-8)
const (
	ReadersHeaderLength = 128
	ReaderSlotLength    = 128
	// readerSlots is the number of slots of a registry this package
	// creates: at most that many Tailers at once, in all processes.
	readerSlots = 256
	// MaxReaderName is the longest reader name kept (longer ones are cut).
	MaxReaderName = ReaderSlotLength - SlNameOffset

	ReadersName       = "readers"
	ReadersMagic      = "DUTYJRDR"
	maxReaderSlots    = 1 << 16
	RdVersionOffset   = 8
	RdHeaderLenOffset = 12
	RdSlotLenOffset   = 16
	RdSlotsOffset     = 20
	RdCRCOffset       = 24
	RdProposedOffset  = 32
	RdFloorOffset     = 40
	RdHighWaterOffset = 48

	SlClaimOffset      = 0
	SlStartOffset      = 8
	SlNamespaceOffset  = 16
	SlPositionOffset   = 24
	SlUpdatedOffset    = 32
	SlRegisteredOffset = 40
	SlNameLenOffset    = 48
	SlNameOffset       = 52
)

// Slot states, in the claim word's bits 32-39.
const (
	SlotFree     = 0 // nobody: claimable
	SlotClaiming = 1 // claimed, being filled: its position is not yet valid
	SlotActive   = 2 // a registered reader at its position
)

// ClaimWord packs a slot's claim word. The generation changes with every
// claim and every free, so a compare-and-swap on the whole word fails if
// the slot changed hands since it was read (no ABA).
func ClaimWord(pid uint32, state uint8, gen uint32) uint64 {
	return uint64(pid) | uint64(state)<<32 | uint64(gen&0xFFFFFF)<<40
}

func SplitClaim(w uint64) (pid uint32, state uint8, gen uint32) {
	return uint32(w), uint8(w >> 32), uint32(w >> 40)
}

// ErrRegistryUnavailable: the registry cannot be opened for writing here
// (a read-only file system, another user's directory).
var ErrRegistryUnavailable = errors.New("journal: reader registry unavailable")

// MaxPosition bounds the positions a registry may name (2^62 bytes of
// log): a word past it is garbage, and adding to it cannot overflow.
const MaxPosition = 1 << 62

// ClaimTimeout is how long a slot may stay claiming (claimed, not yet
// active) before whoever has watched it that long takes its claimer for
// dead.
var ClaimTimeout = 10 * time.Second

// ReaderRecheck is how long the writer trusts a slot it found alive before
// it asks the process table again (retention runs every Flusher cycle).
var ReaderRecheck = 100 * time.Millisecond

// procIdentity is a process as a slot records it.
type procIdentity struct {
	PID        int
	Start, NS  uint64
	NamePrefix string
}

var SelfIdentity = sync.OnceValue(func() procIdentity {
	me := procIdentity{PID: os.Getpid(), NS: procinfo.PidNamespace(), NamePrefix: filepath.Base(os.Args[0])}
	if st, _, known := procinfo.Info(me.PID); known {
		me.Start = st
	}
	return me
})

// ownerAlive applies the liveness rule to a slot's owner: it is dead when
// its pid is 0, when kill(pid, 0) finds no such process, when the process
// is a zombie, or when the process with that pid started at another time
// than the slot records (the pid was reused). It is alive otherwise, and
// in particular whenever it cannot be judged: a slot of another pid
// namespace, a start identity unknown on either side.
func ownerAlive(pid uint32, start, ns uint64, me procIdentity) bool {
	if pid == 0 || pid > 1<<30 {
		return false
	}
	if ns != 0 && me.NS != 0 && ns != me.NS {
		return true
	}
	if int(pid) == me.PID {
		return start == 0 || me.Start == 0 || start == me.Start
	}
	return procinfo.Running(int(pid), start)
}

// Registry is a mapped reader registry.
type Registry struct {
	path  string
	Mem   []byte
	Slots int
	Me    procIdentity
	// checked caches, per slot, the claim word last found alive and when;
	// claiming, the claim word first seen claiming and when. Guarded by
	// the journal's mu.
	checked, claiming []checkedSlot
	Logger            *slog.Logger
}

type checkedSlot struct {
	word uint64
	at   time.Time
}

func Word64(b []byte, off int) *atomic.Int64 {
	_ = b[off+7]
	return (*atomic.Int64)(unsafe.Pointer(&b[off]))
}

func (r *Registry) SlotOff(i int) int             { return ReadersHeaderLength + i*ReaderSlotLength }
func (r *Registry) Word(i, off int) *atomic.Int64 { return Word64(r.Mem, r.SlotOff(i)+off) }
func (r *Registry) Claim(i int) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(r.Word(i, SlClaimOffset)))
}
func (r *Registry) Proposed() *atomic.Int64 { return Word64(r.Mem, RdProposedOffset) }
func (r *Registry) Floor() *atomic.Int64    { return Word64(r.Mem, RdFloorOffset) }

// highWater returns how many leading slots have ever been claimed (a
// value out of range is taken as all of them).
func (r *Registry) highWater() int {
	hw := Word64(r.Mem, RdHighWaterOffset).Load()
	if hw < 0 || hw > int64(r.Slots) {
		return r.Slots
	}
	return int(hw)
}

// PutReadersHeader writes a fresh registry header into b.
func PutReadersHeader(b []byte, slots int) {
	le := binary.LittleEndian
	copy(b, ReadersMagic)
	le.PutUint32(b[RdVersionOffset:], Version)
	le.PutUint32(b[RdHeaderLenOffset:], ReadersHeaderLength)
	le.PutUint32(b[RdSlotLenOffset:], ReaderSlotLength)
	le.PutUint32(b[RdSlotsOffset:], uint32(slots))
	le.PutUint32(b[RdCRCOffset:], crc32.Checksum(b[:RdCRCOffset], Castagnoli))
}

// checkReadersHeader validates a registry header against the file's size
// and returns its slot count. Every error matches ErrCorrupt or
// ErrVersion.
func checkReadersHeader(b []byte, size int64) (int, error) {
	le := binary.LittleEndian
	if len(b) < ReadersHeaderLength {
		return 0, fmt.Errorf("%w: reader registry of %d bytes", ErrCorrupt, len(b))
	}
	if string(b[:8]) != ReadersMagic {
		return 0, fmt.Errorf("%w: reader registry: bad magic %q", ErrCorrupt, b[:8])
	}
	if got, want := crc32.Checksum(b[:RdCRCOffset], Castagnoli), le.Uint32(b[RdCRCOffset:]); got != want {
		return 0, fmt.Errorf("%w: reader registry: header CRC %#08x, header says %#08x", ErrCorrupt, got, want)
	}
	if v := le.Uint32(b[RdVersionOffset:]); v != Version {
		return 0, fmt.Errorf("%w: reader registry: version %d, want %d", ErrVersion, v, Version)
	}
	slots := int64(le.Uint32(b[RdSlotsOffset:]))
	if le.Uint32(b[RdHeaderLenOffset:]) != ReadersHeaderLength || le.Uint32(b[RdSlotLenOffset:]) != ReaderSlotLength ||
		slots < 1 || slots > maxReaderSlots {
		return 0, fmt.Errorf("%w: reader registry: header length %d, slot length %d, %d slots", ErrCorrupt,
			le.Uint32(b[RdHeaderLenOffset:]), le.Uint32(b[RdSlotLenOffset:]), slots)
	}
	if want := ReadersHeaderLength + slots*ReaderSlotLength; size != want {
		return 0, fmt.Errorf("%w: reader registry of %d bytes, its header says %d", ErrCorrupt, size, want)
	}
	return int(slots), nil
}

// createReaders makes a registry file: complete under a temporary name,
// synced, then linked to its name, which fails if another process made it
// first (then theirs is used). replace renames over a damaged one instead.
func createReaders(dir string, replace bool) error {
	f, err := os.CreateTemp(dir, "readers-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	b := make([]byte, ReadersHeaderLength+readerSlots*ReaderSlotLength)
	PutReadersHeader(b, readerSlots)
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	path := filepath.Join(dir, ReadersName)
	if replace {
		err = os.Rename(tmp, path)
	} else if err = os.Link(tmp, path); errors.Is(err, fs.ErrExist) {
		err = nil
	}
	if err == nil {
		_ = mmapfile.SyncDir(dir)
	}
	return err
}

// OpenReaders maps the journal's reader registry read-write, creating it
// if it is missing. A registry whose header is not one this package
// writes is an error matching ErrCorrupt, unless replace (a writer not in
// RecoverStrict) says to make a new one. ErrRegistryUnavailable when the
// file cannot be written here.
func OpenReaders(dir string, replace bool) (r *Registry, replaced bool, err error) {
	path := filepath.Join(dir, ReadersName)
	for attempt := 0; ; attempt++ {
		r, err = mapReaders(path)
		if err == nil {
			return r, replaced, nil
		}
		if attempt == 4 {
			return nil, replaced, err
		}
		switch {
		case errors.Is(err, fs.ErrNotExist):
			err = createReaders(dir, false)
		case errors.Is(err, ErrCorrupt) && replace && !replaced:
			replaced = true
			err = createReaders(dir, true)
		default:
			return nil, replaced, err
		}
		// A leftover-temporary cleanup by a writer's Open can remove our
		// temporary file under us (ENOENT): try again.
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			if errors.Is(err, fs.ErrPermission) || errors.Is(err, unix.EROFS) {
				return nil, replaced, fmt.Errorf("%w: %s: %v", ErrRegistryUnavailable, path, err)
			}
			return nil, replaced, fmt.Errorf("journal: reader registry: %w", err)
		}
	}
}

func mapReaders(path string) (*Registry, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) || errors.Is(err, unix.EROFS) {
			return nil, fmt.Errorf("%w: %v", ErrRegistryUnavailable, err)
		}
		if errors.Is(err, unix.EISDIR) {
			return nil, fmt.Errorf("%w: reader registry %s is a directory", ErrCorrupt, path)
		}
		return nil, err
	}
	defer f.Close()
	slots, err := statReaders(f)
	if err != nil {
		return nil, err
	}
	b, err := mapFile(f, int64(ReadersHeaderLength+slots*ReaderSlotLength), true)
	if err != nil {
		return nil, err
	}
	return &Registry{path: path, Mem: b, Slots: slots, Me: SelfIdentity(), checked: make([]checkedSlot, slots), claiming: make([]checkedSlot, slots)}, nil
}

// statReaders reads and checks the header of an open registry file.
func statReaders(f *os.File) (int, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("journal: reader registry: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("%w: reader registry %s is not a regular file", ErrCorrupt, f.Name())
	}
	var hdr [ReadersHeaderLength]byte
	n, _ := f.ReadAt(hdr[:], 0)
	slots, err := checkReadersHeader(hdr[:n], fi.Size())
	if err != nil {
		return 0, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return slots, nil
}

// register claims a free slot for a reader at pos: a compare-and-swap
// from free to claiming (with this process's pid and the next
// generation), the fields filled, then the claim word stored as active.
// If no slot is free it reclaims the slots of dead owners and tries once
// more; ErrReadersFull if none is left.
//
// Ordering: every store here is sequentially consistent (sync/atomic), as
// is the caller's load of the proposed floor after it (Tailer.seekTo): with
// the writer's store of the proposed floor before its scan, either the
// scan sees this slot or this reader sees the proposal (the store-load
// pattern of Dekker's algorithm; LOCK-prefixed or XCHG on amd64,
// STLR/LDAR on arm64, across processes through the shared mapping alike).
func (r *Registry) Register(pos int64, name string, now int64) (int, uint64, error) {
	for pass := 0; pass < 2; pass++ {
		for i := range r.Slots {
			cw := r.Claim(i)
			w := cw.Load()
			_, state, gen := SplitClaim(w)
			if state != SlotFree {
				continue
			}
			gen++
			if !cw.CompareAndSwap(w, ClaimWord(uint32(r.Me.PID), SlotClaiming, gen)) {
				continue
			}
			// Raise the high water to cover slot i before the slot is
			// active (scans stop there). One out of range is taken as all
			// the slots, and repaired as such, never lowered.
			hw := Word64(r.Mem, RdHighWaterOffset)
			for {
				h := hw.Load()
				want := int64(i + 1)
				if h > int64(r.Slots) || h < 0 {
					want = int64(r.Slots)
				} else if h >= want {
					break
				}
				if hw.CompareAndSwap(h, want) {
					break
				}
			}
			r.Word(i, SlStartOffset).Store(int64(r.Me.Start))
			r.Word(i, SlNamespaceOffset).Store(int64(r.Me.NS))
			r.Word(i, SlPositionOffset).Store(pos)
			r.Word(i, SlUpdatedOffset).Store(now)
			r.Word(i, SlRegisteredOffset).Store(now)
			off := r.SlotOff(i)
			n := copy(r.Mem[off+SlNameOffset:off+ReaderSlotLength], name)
			clear(r.Mem[off+SlNameOffset+n : off+ReaderSlotLength])
			binary.LittleEndian.PutUint32(r.Mem[off+SlNameLenOffset:], uint32(n))
			active := ClaimWord(uint32(r.Me.PID), SlotActive, gen)
			if !cw.CompareAndSwap(ClaimWord(uint32(r.Me.PID), SlotClaiming, gen), active) {
				continue // reclaimed under a claimer stalled past ClaimTimeout: another slot
			}
			return i, active, nil
		}
		if pass == 0 {
			r.ReclaimDead()
		}
	}
	return -1, 0, fmt.Errorf("%w: %d slots in %s", ErrReadersFull, r.Slots, r.path)
}

// free gives back slot i if it still holds word (the owner's Close). A
// slot reclaimed meanwhile (which only happens to a dead owner's, or a
// damaged one) is left alone.
func (r *Registry) Free(i int, word uint64) bool {
	_, _, gen := SplitClaim(word)
	return r.Claim(i).CompareAndSwap(word, ClaimWord(0, SlotFree, gen+1))
}

// verify reports whether slot i, found holding w, belongs to a live
// owner. A dead owner's slot (or one with a state no writer stores) is
// reclaimed: a compare-and-swap from w to free, which fails if the slot
// changed hands since (then it counts as live: the conservative answer).
//
// A claiming slot's identity fields may still be its last owner's (the
// claimer writes them after its compare-and-swap), so it is judged by
// time alone: reclaimed once this registry has seen the same claim word
// (generation included) claiming for ClaimTimeout, which a live claimer
// (a few stores between its swap and its activation) never takes.
func (r *Registry) Verify(i int, w uint64, cache bool) bool {
	pid, state, _ := SplitClaim(w)
	switch state {
	case SlotActive:
		if cache && r.checked[i].word == w && time.Since(r.checked[i].at) < ReaderRecheck {
			return true
		}
		start := uint64(r.Word(i, SlStartOffset).Load())
		ns := uint64(r.Word(i, SlNamespaceOffset).Load())
		if ownerAlive(pid, start, ns, r.Me) {
			if cache {
				r.checked[i] = checkedSlot{word: w, at: time.Now()}
			}
			return true
		}
	case SlotClaiming:
		if c := &r.claiming[i]; c.word != w {
			*c = checkedSlot{word: w, at: time.Now()}
			return true
		} else if time.Since(c.at) < ClaimTimeout {
			return true
		}
	}
	if !r.Free(i, w) {
		return true
	}
	if r.Logger != nil {
		r.Logger.Info("journal: reader slot reclaimed", "registry", r.path, "slot", i, "pid", pid, "state", state)
	}
	return false
}

// ReclaimDead frees every slot whose owner is dead.
func (r *Registry) ReclaimDead() {
	for i := range r.highWater() {
		if w := r.Claim(i).Load(); uint8(w>>32) != SlotFree {
			r.Verify(i, w, false)
		}
	}
}

// lowest returns the lowest position in [lo, hi] of the active slots,
// math.MaxInt64 if none. With verify it checks each owner that would hold
// a segment before below (its liveness cached for ReaderRecheck) and
// reclaims dead ones; without, it trusts the slots (the writer's second
// scan: a slot registered since the first is live by construction).
func (r *Registry) Lowest(lo, hi, below int64, verify bool) int64 {
	m := int64(1<<63 - 1)
	for i := range r.highWater() {
		w := r.Claim(i).Load()
		_, state, _ := SplitClaim(w)
		if state == SlotFree || state == SlotClaiming && !verify {
			continue
		}
		if state != SlotActive { // claiming (a dead claimer's?) or garbage
			r.Verify(i, w, true)
			continue
		}
		p := r.Word(i, SlPositionOffset).Load()
		if p < lo || p > hi || p >= min(m, below) {
			continue
		}
		if verify && !r.Verify(i, w, true) {
			continue
		}
		m = p
	}
	return m
}

// active counts the active slots (no liveness check: loads only).
func (r *Registry) Active() int {
	n := 0
	for i := range r.highWater() {
		if _, state, _ := SplitClaim(r.Claim(i).Load()); state == SlotActive {
			n++
		}
	}
	return n
}

// close unmaps the registry. While Tailers may still store into it
// (late ones, after Journal.Close), the mapping is replaced by private
// zero pages instead, which take their stores harmlessly, and left mapped.
func (r *Registry) Close(inUse bool) error {
	if !inUse {
		return mmapfile.Unmap(r.Mem)
	}
	_, err := unix.MmapPtr(-1, 0, unsafe.Pointer(unsafe.SliceData(r.Mem)), uintptr(len(r.Mem)),
		unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_FIXED)
	return err
}

// ReaderInfo describes one registered reader, as Inspect finds it in the
// reader registry.
type ReaderInfo struct {
	Slot       int
	PID        int
	Name       string
	Position   int64 // the next record it reads
	Lag        int64 // committed position minus Position (0 without a status, or ahead of it)
	Registered int64 // ns since the Unix epoch
	Updated    int64 // ns since the Unix epoch: registration, a seek, or a segment entered
	// Alive: its process runs, by the liveness rule, as judged from the
	// inspecting process. A dead reader's slot is reclaimed by the next
	// writer retention or reader registration that needs it.
	Alive bool
	// Pending: the slot is claimed and not yet filled (its other fields
	// may be the last owner's; Alive is not judged).
	Pending bool
}

// DecodeReaders reads the slots of a mapped registry (b: the whole file,
// 8-byte aligned) with atomic loads. It returns the claimed slots; a slot
// no writer of this package produces (an unknown state, a pid of 0, a
// name longer than its field, a negative or unaligned position) is
// skipped, and the first such is returned as an error matching ErrCorrupt.
func DecodeReaders(b []byte, me procIdentity) ([]ReaderInfo, error) {
	slots, err := checkReadersHeader(b, int64(len(b)))
	if err != nil {
		return nil, err
	}
	r := &Registry{Mem: b, Slots: slots}
	var out []ReaderInfo
	var bad error
	for i := range r.highWater() {
		pid, state, _ := SplitClaim(r.Claim(i).Load())
		if state == SlotFree {
			continue
		}
		off := r.SlotOff(i)
		ri := ReaderInfo{
			Slot: i, PID: int(pid), Pending: state == SlotClaiming,
			Position:   r.Word(i, SlPositionOffset).Load(),
			Updated:    r.Word(i, SlUpdatedOffset).Load(),
			Registered: r.Word(i, SlRegisteredOffset).Load(),
		}
		n := binary.LittleEndian.Uint32(b[off+SlNameLenOffset:])
		var why string
		switch {
		case state != SlotClaiming && state != SlotActive:
			why = fmt.Sprintf("state %d", state)
		case pid == 0 || pid > 1<<30:
			why = fmt.Sprintf("pid %d", pid)
		case n > MaxReaderName:
			why = fmt.Sprintf("name of %d bytes", n)
		case state == SlotActive && (ri.Position < 0 || ri.Position&(RecordAlignment-1) != 0):
			why = fmt.Sprintf("position %d", ri.Position)
		}
		if why != "" {
			if bad == nil {
				bad = fmt.Errorf("%w: reader registry: slot %d: %s", ErrCorrupt, i, why)
			}
			continue
		}
		ri.Name = string(b[off+SlNameOffset : off+SlNameOffset+int(n)])
		if !ri.Pending {
			ri.Alive = ownerAlive(pid, uint64(r.Word(i, SlStartOffset).Load()), uint64(r.Word(i, SlNamespaceOffset).Load()), me)
		}
		out = append(out, ri)
	}
	return out, bad
}

// readReaders maps a registry file read-only and decodes it.
func readReaders(path string) ([]ReaderInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	slots, err := statReaders(f)
	if err != nil {
		return nil, err
	}
	b, err := mapFile(f, int64(ReadersHeaderLength+slots*ReaderSlotLength), false)
	if err != nil {
		return nil, err
	}
	defer mmapfile.Unmap(b)
	out, err := DecodeReaders(b, SelfIdentity())
	if err != nil {
		err = fmt.Errorf("%s: %w", path, err)
	}
	return out, err
}
