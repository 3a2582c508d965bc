package counters

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/internal/atomicbuf"
)

// DefaultFreeToReuseTimeout is Aeron's default reuse delay
// (aeron.counters.free.to.reuse.timeout): what a manager of counters read by
// other processes should use.
const DefaultFreeToReuseTimeout = time.Second

// Config configures a Manager. The zero value is Agrona's short constructor:
// freed ids are reusable at once, and the clock is the wall clock.
type Config struct {
	// FreeToReuseTimeout is how long a freed id stays unused, so that a
	// reader still holding it (a stat tool, another process) notices, by
	// its state and registration id, that it has gone before the slot means
	// something else. 0 reuses at once; negative is ErrArgument. Use
	// DefaultFreeToReuseTimeout for counters in a shared file.
	FreeToReuseTimeout time.Duration
	// Clock's wall clock (EpochMillis) times the free-for-reuse deadlines
	// in the metadata, which other processes read. nil means clock.System.
	// Tests inject a clock.Manual.
	Clock clock.Clock
}

// Manager allocates and frees counters in one pair of regions. It is the
// owner: exactly one Manager may exist per pair of regions, across all
// processes (see NewManager and Recover).
//
// A Manager is safe for concurrent use: allocation and free take a mutex
// (Agrona's ConcurrentCountersManager; allocation is cold). The hot
// operations of a Counter never touch it.
type Manager struct {
	regions
	timeoutMs int64
	clock     func() int64

	mu        sync.Mutex
	highWater int        // highest id ever allocated, -1 if none
	free      []freeSlot // freed ids in order of deadline
	nextRegID int64      // registration id of the next allocation
}

type freeSlot struct {
	id       int
	deadline int64
}

// NewManager returns the manager of fresh regions: zero-filled, never used
// (new memory, a newly created file). It checks the alignment and sizes of
// both regions (ErrArgument) and that record 0 is unused
// (ErrInUse otherwise): a second manager over live regions would hand out
// ids already in use, Agrona issue #293. A restarted owner uses Recover.
// NewManager never writes to the regions.
func NewManager(metadata, values []byte, cfg Config) (*Manager, error) {
	m, err := newManager(metadata, values, cfg)
	if err != nil {
		return nil, err
	}
	if s := m.state(0); s != stateUnused {
		return nil, fmt.Errorf("%w: counter 0 has state %d (use Recover)", ErrInUse, s)
	}
	return m, nil
}

// Recover returns a manager for regions that may already hold counters,
// written by a previous owner that has gone (a restarted process over its
// shared file). It scans the metadata from id 0 to the first unused record:
// allocated ids stay allocated and come back as Counters, in id order, for
// the new owner to keep updating (closing one frees its id); reclaimed ids
// join the free list with the deadline stored in their record, and
// registration ids continue after the highest one found. A record in an
// unknown state stops the scan with ErrCorrupt.
//
// Recover does not write to the regions, and it cannot know whether the
// previous owner is still running: the caller (the ipc layer's liveness
// check) guarantees it is not. Two live managers hand out the same ids.
func Recover(metadata, values []byte, cfg Config) (*Manager, []*Counter, error) {
	m, err := newManager(metadata, values, cfg)
	if err != nil {
		return nil, nil, err
	}
	var live []*Counter
	maxReg := int64(0)
	for id := 0; id <= m.maxID; id++ {
		s := m.state(id)
		if s == stateUnused {
			break
		}
		if err := checkState(id, s); err != nil {
			return nil, nil, err
		}
		m.highWater = id
		maxReg = max(maxReg, m.registrationID(id))
		if s == StateReclaimed {
			d := m.deadline(id)
			if d == notFreeToReuse {
				// The previous owner stopped between storing RECLAIMED
				// and the deadline: start the delay now.
				d = m.deadlineFrom(m.clock())
			}
			m.free = append(m.free, freeSlot{id: id, deadline: d})
		} else {
			live = append(live, m.counterAt(id))
		}
	}
	sort.SliceStable(m.free, func(i, j int) bool { return m.free[i].deadline < m.free[j].deadline })
	if maxReg == math.MaxInt64 {
		return nil, nil, corrupt("registration id %d leaves none to allocate", maxReg)
	}
	m.nextRegID = maxReg + 1
	return m, live, nil
}

func newManager(metadata, values []byte, cfg Config) (*Manager, error) {
	if cfg.FreeToReuseTimeout < 0 {
		return nil, fmt.Errorf("%w: negative FreeToReuseTimeout %v", ErrArgument, cfg.FreeToReuseTimeout)
	}
	r, err := wrap(metadata, values)
	if err != nil {
		return nil, err
	}
	clock := clock.System.EpochMillis
	if cfg.Clock != nil {
		clock = cfg.Clock.EpochMillis
	}
	return &Manager{
		regions:   r,
		timeoutMs: cfg.FreeToReuseTimeout.Milliseconds(),
		clock:     clock,
		highWater: -1,
		nextRegID: 1,
	}, nil
}

// Reader returns a reader over the manager's regions.
func (m *Manager) Reader() *Reader { return &Reader{regions: m.regions} }

// available returns how many counters can be allocated now: ids never used
// plus freed ids past their reuse deadline.
func (m *Manager) available() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock()
	n := m.maxID - m.highWater
	for _, f := range m.free {
		if f.deadline <= now {
			n++
		}
	}
	return n
}

// Allocate allocates a counter and returns it, with value 0, owner and
// reference ids 0, and a registration id higher than any this manager
// handed out before. The label is truncated to maxLabelLength bytes on a
// UTF-8 boundary; a key longer than 112 bytes wraps ErrArgument
// (the key area is zero-padded). typeID is free for the application (see
// the Type constants for duty's own). ErrFull when no id is free: never
// used ids are exhausted and no freed id has passed its reuse deadline.
//
// Publication order: a reused id's deadline goes back to notFreeToReuse
// and its value record is reset (registration id first); then type id, key,
// deadline, label bytes, label length (release), the new
// registration id (release) and last the state ALLOCATED (release). A
// reader that loads ALLOCATED sees all of them.
func (m *Manager) Allocate(label string, typeID int32, key []byte) (*Counter, error) {
	if len(key) > maxKeyLength {
		return nil, fmt.Errorf("%w: key of %d bytes, max %d", ErrArgument, len(key), maxKeyLength)
	}
	label = truncateLabel(label)

	m.mu.Lock()
	defer m.mu.Unlock()
	id, err := m.nextID()
	if err != nil {
		return nil, err
	}
	regID := m.nextRegID
	m.nextRegID++

	rec := metadataOffset(id)
	m.meta.Int32At(rec + typeIDOffset).Store(typeID)
	storeWords(m.meta, rec+keyOffset, key, maxKeyLength)
	m.meta.Int64At(rec + freeForReuseDeadlineOffset).Store(notFreeToReuse)
	storeWords(m.meta, rec+labelOffset, label, 0)
	atomicbuf.StoreRelease32(m.meta.Int32At(rec+labelLengthOffset), int32(len(label)))
	atomicbuf.StoreRelease64(m.vals.Int64At(valueOffset(id)+registrationIDOffset), regID)
	atomicbuf.StoreRelease32(m.meta.Int32At(rec+stateOffset), StateAllocated)
	return &Counter{word: m.valueWord(id), id: id, regID: regID, m: m}, nil
}

// nextID takes the first freed id past its deadline, resetting its value
// record, or the next never-used id. m.mu is held.
func (m *Manager) nextID() (int, error) {
	if len(m.free) > 0 {
		now := m.clock()
		for i, f := range m.free {
			if f.deadline <= now {
				m.free = append(m.free[:i], m.free[i+1:]...)
				// The deadline goes back to notFreeToReuse before anything
				// else changes: a reader copying the reclaimed record sees
				// the deadline change and discards its copy.
				m.meta.Int64At(metadataOffset(f.id) + freeForReuseDeadlineOffset).Store(notFreeToReuse)
				m.resetValue(f.id)
				return f.id, nil
			}
		}
	}
	if m.highWater >= m.maxID {
		return 0, fmt.Errorf("%w: maxCounterId=%d", ErrFull, m.maxID)
	}
	m.highWater++
	return m.highWater, nil
}

// resetValue clears a reused id's value record. The registration id goes to
// 0 first: a reader that copied anything of the new incarnation then sees
// its registration id change and discards the copy.
func (m *Manager) resetValue(id int) {
	v := valueOffset(id)
	m.vals.Int64At(v + registrationIDOffset).Store(defaultRegistrationID)
	m.vals.Int64At(v + ownerIDOffset).Store(defaultOwnerID)
	m.vals.Int64At(v + referenceIDOffset).Store(defaultReferenceID)
	m.vals.Int64At(v + valueFieldOffset).Store(0)
}

// freeID frees counter id: its state becomes RECLAIMED (release), its key is
// zeroed and its free-for-reuse deadline is now + FreeToReuseTimeout. The
// value, label and registration id stay until the id is reused. ErrArgument
// for a bad id, ErrCorrupt unless the id is allocated. Counter.Close
// calls it (a restarted owner frees a counter Recover found by adopting
// it and closing the Counter).
func (m *Manager) freeID(id int) error {
	if err := m.checkID(id); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.freeLocked(id)
}

func (m *Manager) freeLocked(id int) error {
	rec := metadataOffset(id)
	if s := m.state(id); s != StateAllocated {
		return corrupt("id=%d is not allocated (state %d)", id, s)
	}
	deadline := m.deadlineFrom(m.clock())
	atomicbuf.StoreRelease32(m.meta.Int32At(rec+stateOffset), StateReclaimed)
	storeWords(m.meta, rec+keyOffset, "", maxKeyLength)
	m.meta.Int64At(rec + freeForReuseDeadlineOffset).Store(deadline)
	m.free = append(m.free, freeSlot{id: id, deadline: deadline})
	// Deadlines are now + a constant from a clock that normally only moves
	// forward; keep the list sorted if it did not.
	if n := len(m.free); n > 1 && m.free[n-2].deadline > deadline {
		sort.SliceStable(m.free, func(i, j int) bool { return m.free[i].deadline < m.free[j].deadline })
	}
	return nil
}

// deadlineFrom returns now + the reuse timeout, saturated below
// notFreeToReuse.
func (m *Manager) deadlineFrom(now int64) int64 {
	if now >= notFreeToReuse-1-m.timeoutMs {
		return notFreeToReuse - 1
	}
	return now + m.timeoutMs
}

// freeCounter frees c's id if it still holds c's incarnation: an id freed
// by another writer and reused since belongs to someone else.
func (m *Manager) freeCounter(c *Counter) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.state(c.id) != StateAllocated || m.registrationID(c.id) != c.regID {
		return corrupt("id=%d no longer holds registration id %d: another writer freed it", c.id, c.regID)
	}
	return m.freeLocked(c.id)
}

// counterAt returns a Counter for the allocated id.
func (m *Manager) counterAt(id int) *Counter {
	return &Counter{word: m.valueWord(id), id: id, regID: m.registrationID(id), m: m}
}
