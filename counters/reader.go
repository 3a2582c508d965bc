package counters

import "sync/atomic"

// Record is a consistent snapshot of one counter, handed to
// Reader.ForEachRecord's callback.
type Record struct {
	ID             int
	State          int32
	TypeID         int32
	RegistrationID int64
	OwnerID        int64
	ReferenceID    int64
	Value          int64
	// FreeForReuseDeadline is when a reclaimed id may be reused, epoch
	// ms (math.MaxInt64 while allocated).
	FreeForReuseDeadline int64
	// Key is the whole maxKeyLength-byte key area (keys have no stored
	// length; a shorter key is zero-padded). Label is the label's bytes.
	// Both alias the Reader's scratch space: valid only during the
	// callback.
	Key   []byte
	Label []byte
}

// Reader reads counters from a pair of regions, in this process or in any
// other that maps them. It never writes to the regions.
//
// Every length read from the regions is bounds-checked: a corrupt state or
// label length gives ErrCorrupt, never a panic, and every call does work
// bounded by MaxCounterID whatever the regions contain.
//
// Record and Value are safe for concurrent use. ForEachRecord uses the
// Reader's scratch space: one call at a time per Reader (give each goroutine its own; NewReader allocates
// nothing but the Reader).
type Reader struct {
	regions
	label [maxLabelLength]byte
	key   [maxKeyLength]byte
}

// NewReader returns a reader over metadata and values, with the checks of
// NewManager (ErrArgument). It does not read or write the
// regions' contents.
func NewReader(metadata, values []byte) (*Reader, error) {
	r, err := wrap(metadata, values)
	if err != nil {
		return nil, err
	}
	return &Reader{regions: r}, nil
}

// MaxCounterID returns the highest counter id the regions hold:
// len(values)/valueRecordLength - 1.
func (r *Reader) MaxCounterID() int { return r.maxID }

// maxAttempts bounds the re-reads of a record that changes while it is
// being copied (freed and reused). A record still changing after them is
// skipped by the iterations.
const maxAttempts = 4

// stateChanging is snapshot's result for a record that kept changing.
const stateChanging int32 = 2

// snapshot copies id's record into rec, with its label and key in the
// given buffers, as a seqlock read: load the state, deadline and
// registration id, copy everything, load them again, and retry if any
// changed. The manager's stores make every rewrite visible in those words
// before any byte changes: free stores RECLAIMED first; reuse stores the
// deadline notFreeToReuse (a reclaimed record has a finite one), then
// registration id 0, and the new registration id and the state ALLOCATED
// last. A reclaimed record whose deadline is notFreeToReuse is in the
// middle of a free or a reuse and is retried too. An unused record returns
// stateUnused with nothing copied; a reclaimed one is copied only if
// withReclaimed.
func (r *regions) snapshot(id int, rec *Record, label, key []byte, withReclaimed bool) (int32, error) {
	for range maxAttempts {
		s := r.state(id)
		if err := checkState(id, s); err != nil {
			return s, err
		}
		if s == stateUnused || (s == StateReclaimed && !withReclaimed) {
			return s, nil
		}
		deadline := r.deadline(id)
		if s == StateReclaimed && deadline == notFreeToReuse {
			continue
		}
		reg := r.registrationID(id)
		n, err := r.labelLength(id)
		if err != nil {
			return s, err
		}
		meta := metadataOffset(id)
		*rec = Record{
			ID:                   id,
			State:                s,
			TypeID:               r.typeID(id),
			RegistrationID:       reg,
			OwnerID:              r.ownerID(id),
			ReferenceID:          r.referenceID(id),
			Value:                r.valueWord(id).Load(),
			FreeForReuseDeadline: deadline,
			Key:                  key[:maxKeyLength:maxKeyLength],
			Label:                label[:n:n],
		}
		loadWords(r.meta, meta+keyOffset, rec.Key)
		loadWords(r.meta, meta+labelOffset, rec.Label)
		if r.registrationID(id) == reg && r.deadline(id) == deadline && r.state(id) == s {
			return s, nil
		}
	}
	return stateChanging, nil
}

// ForEachRecord calls fn with each allocated counter, in id order, until fn
// returns false. As Agrona's forEach, it walks records from id 0, skips
// reclaimed ones and stops at the first unused one (ids are allocated
// densely). Each record is a consistent snapshot: a record freed or reused
// while it is copied is re-read, and skipped if it keeps changing. It stops
// with ErrCorrupt at the first record with an unknown state or a bad label
// length, after delivering the ones before it. It does not allocate.
func (r *Reader) ForEachRecord(fn func(Record) bool) error {
	var rec Record
	for id := 0; id <= r.maxID; id++ {
		s, err := r.snapshot(id, &rec, r.label[:], r.key[:], false)
		if err != nil {
			return err
		}
		switch s {
		case stateUnused:
			return nil
		case StateAllocated:
			if !fn(rec) {
				return nil
			}
		}
	}
	return nil
}

// FindByRegistrationID returns the id of the allocated counter with the
// given registration id, or nullCounterID.
func (r *Reader) FindByRegistrationID(registrationID int64) (int, error) {
	return r.find(func(id int) bool { return r.registrationID(id) == registrationID })
}

func (r *Reader) find(match func(id int) bool) (int, error) {
	for id := 0; id <= r.maxID; id++ {
		s := r.state(id)
		if err := checkState(id, s); err != nil {
			return nullCounterID, err
		}
		if s == stateUnused {
			break
		}
		// The state is loaded again after the match: a record reused in
		// between carries a new registration id, which cannot match.
		if s == StateAllocated && match(id) && r.state(id) == StateAllocated {
			return id, nil
		}
	}
	return nullCounterID, nil
}

// Record returns a consistent snapshot of id's record (see ForEachRecord)
// whatever its state, with its own copies of the key and label: a
// reclaimed record keeps its label until reuse; an unused one has State 0
// and nothing else; a record rewritten faster than it can be read comes
// back with its ID and State only. An id outside 0..MaxCounterID wraps
// ErrArgument; an unknown state or bad label length wraps ErrCorrupt.
func (r *Reader) Record(id int) (Record, error) {
	if err := r.checkID(id); err != nil {
		return Record{}, err
	}
	var rec Record
	var label [maxLabelLength]byte
	var key [maxKeyLength]byte
	s, err := r.snapshot(id, &rec, label[:], key[:], true)
	if err != nil {
		return Record{}, err
	}
	if s != StateAllocated && s != StateReclaimed {
		return Record{ID: id, State: r.state(id)}, nil
	}
	rec.Key = append([]byte(nil), rec.Key...)
	rec.Label = append([]byte(nil), rec.Label...)
	return rec, nil
}

// Value returns id's value (an atomic load), whatever its state.
func (r *Reader) Value(id int) (int64, error) {
	if err := r.checkID(id); err != nil {
		return 0, err
	}
	return r.valueWord(id).Load(), nil
}

// Word returns id's value word. The Reader never writes, but a process that
// was handed a counter id by the regions' owner (a subscriber position the
// owner allocated for it, as Aeron's driver does for its clients) updates
// the value through this word; check the registration id first (Record),
// then keep the word.
func (r *Reader) Word(id int) (*atomic.Int64, error) {
	if err := r.checkID(id); err != nil {
		return nil, err
	}
	return r.valueWord(id), nil
}

// ownerIDChecked returns id's owner id.
func (r *Reader) ownerIDChecked(id int) (int64, error) {
	if err := r.checkID(id); err != nil {
		return 0, err
	}
	return r.ownerID(id), nil
}

// referenceIDChecked returns id's reference id.
func (r *Reader) referenceIDChecked(id int) (int64, error) {
	if err := r.checkID(id); err != nil {
		return 0, err
	}
	return r.referenceID(id), nil
}
