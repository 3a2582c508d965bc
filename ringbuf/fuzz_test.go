package ringbuf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/dutyrt/duty/internal/record"
)

// The model of a ring: every record a producer claimed, in claim order.
// The consumer may deliver the committed ones, in order, up to the first
// record still open; aborted ones are skipped.
type modelEntry struct {
	typeID  int32
	payload []byte
	state   int // 0 open, 1 committed, 2 aborted
	claim   Claim
	batch   *Batch
	records *Records
	group   []*modelEntry // records of one batch (or Records) claim
}

type model struct {
	entries []*modelEntry
	nextID  uint32
}

func (m *model) payload(length int) []byte {
	m.nextID++
	p := make([]byte, length)
	for i := range p {
		p[i] = byte(m.nextID*7 + uint32(i))
	}
	if length >= 4 {
		binary.LittleEndian.PutUint32(p, m.nextID)
	}
	return p
}

// deliverable returns the messages a consumer may see now, in order.
func (m *model) deliverable() []*modelEntry {
	var out []*modelEntry
	for _, e := range m.entries {
		if e.state == 0 {
			break
		}
		if e.state == 1 {
			out = append(out, e)
		}
	}
	return out
}

// consume removes everything up to and including e.
func (m *model) consume(e *modelEntry) {
	for i, x := range m.entries {
		if x == e {
			m.entries = m.entries[i+1:]
			return
		}
	}
	panic("consumed an entry the model does not have")
}

// addGroup adds entries claimed together (a batch, Records) to the model.
func (m *model) addGroup(group []*modelEntry) {
	for _, e := range group {
		e.group = group
	}
	m.entries = append(m.entries, group...)
}

// completeGroup commits (choice 0) or aborts (choice 1) a group claimed
// together, marking its entries, or leaves it open (2) for a later commit
// (op 2/3, or the final one). It returns the ring's error.
func completeGroup(group []*modelEntry, choice int, commit, abort func() error) error {
	state, complete := 1, commit
	switch choice {
	case 0:
	case 1:
		state, complete = 2, abort
	default:
		return nil
	}
	if err := complete(); err != nil {
		return err
	}
	for _, e := range group {
		e.state = state
	}
	return nil
}

// commitGroup commits the open batch or Records whose first entry is e.
func commitGroup(r ringBuffer, e *modelEntry) error {
	if e.records != nil {
		return r.CommitRecords(*e.records)
	}
	return r.CommitBatch(*e.batch)
}

type fuzzInput struct {
	data []byte
}

func (in *fuzzInput) next() int {
	if len(in.data) == 0 {
		return 0
	}
	b := in.data[0]
	in.data = in.data[1:]
	return int(b)
}

func FuzzRingModel(f *testing.F) {
	f.Add([]byte{0, 0, 0, 10, 0, 20, 4, 0})
	f.Add([]byte{1, 2, 1, 30, 1, 40, 2, 1, 4, 255, 5, 3, 3, 0, 4, 0})
	f.Add([]byte{0, 1, 6, 3, 10, 20, 30, 7, 2, 8, 8, 1, 4, 255, 5, 0, 1, 2, 3})
	f.Add(bytes.Repeat([]byte{0, 63, 4, 2}, 40))
	f.Add(bytes.Repeat([]byte{1, 60, 7, 3, 20, 0, 5, 2, 2, 0}, 30))
	// Records claims (op 8) committed, aborted and left open, with reads.
	f.Add([]byte{1, 1, 8, 2, 10, 0, 1, 4, 5, 1, 8, 1, 3, 1, 1, 8, 0, 0, 2, 1, 4, 5, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzInput{data: data}
		k := kinds[in.next()%2]
		capacity := []int{64, 128, 256, 1024}[in.next()%4]
		r := newRing(t, k, capacity)
		m := &model{}
		max := r.MaxMessageLength()
		check := func(cond bool, format string, args ...any) {
			if !cond {
				t.Fatalf(format, args...)
			}
		}
		expectDelivered := func(got []msg, consumedUpTo int) {
			want := m.deliverable()
			check(len(got) <= len(want), "delivered %d messages, only %d deliverable", len(got), len(want))
			for i, g := range got {
				check(g.typeID == want[i].typeID && g.payload == string(want[i].payload),
					"message %d: got type %d %x, want type %d %x", i, g.typeID, g.payload, want[i].typeID, want[i].payload)
			}
			if consumedUpTo > 0 {
				m.consume(want[consumedUpTo-1])
			}
		}
		for steps := 0; len(in.data) > 0 && steps < 400; steps++ {
			switch op := in.next() % 9; op {
			case 0: // write
				p := m.payload(in.next() % (max + 1))
				typeID := int32(1 + in.next()%3)
				err := r.Write(typeID, p)
				if err == nil {
					m.entries = append(m.entries, &modelEntry{typeID: typeID, payload: p, state: 1})
				} else {
					check(err == ErrFull, "write: %v", err)
				}
			case 1: // claim
				p := m.payload(in.next() % (max + 1))
				c, err := r.TryClaim(4, len(p))
				if err == nil {
					copy(c.Payload, p)
					m.entries = append(m.entries, &modelEntry{typeID: 4, payload: p, claim: c})
				} else {
					check(err == ErrFull, "claim: %v", err)
				}
			case 2, 3: // commit or abort an open claim
				var open []*modelEntry
				for _, e := range m.entries {
					if e.state == 0 && e.batch == nil && e.group == nil {
						open = append(open, e)
					}
				}
				if len(open) == 0 {
					continue
				}
				e := open[in.next()%len(open)]
				if op == 2 {
					check(r.Commit(e.claim.Index) == nil, "commit failed")
					e.state = 1
					check(errors.Is(r.Commit(e.claim.Index), ErrNotClaimed), "second commit accepted")
				} else {
					check(r.Abort(e.claim.Index) == nil, "abort failed")
					e.state = 2
					check(errors.Is(r.Abort(e.claim.Index), ErrNotClaimed), "second abort accepted")
				}
			case 4: // read
				limit := in.next() % 6
				if limit == 5 {
					limit = NoLimit
				}
				var got []msg
				n, err := r.Read(func(typeID int32, p []byte) { got = append(got, msg{typeID, string(p)}) }, limit)
				check(err == nil, "read: %v", err)
				check(n == len(got) && n <= limit, "read returned %d for %d messages, limit %d", n, len(got), limit)
				expectDelivered(got, len(got))
			case 5: // controlled read with a script of actions
				var got []msg
				consumed := 0
				stopped := false
				n, err := r.ControlledRead(func(typeID int32, p []byte) Action {
					check(!stopped, "handler called after ABORT or BREAK")
					got = append(got, msg{typeID, string(p)})
					a := Action(1 + in.next()%4)
					switch a {
					case Abort:
						stopped = true
					case Break:
						stopped = true
						consumed++
					default:
						consumed++
					}
					return a
				}, NoLimit)
				check(err == nil, "controlled read: %v", err)
				check(n == consumed, "controlled read returned %d, handler accepted %d", n, consumed)
				expectDelivered(got, consumed)
			case 6: // write batch
				count := 1 + in.next()%4
				payloads := make([][]byte, count)
				for i := range payloads {
					payloads[i] = m.payload(in.next() % (max + 1))
				}
				err := r.WriteBatch(5, payloads)
				if err == nil {
					for _, p := range payloads {
						m.entries = append(m.entries, &modelEntry{typeID: 5, payload: p, state: 1})
					}
				} else {
					check(err == ErrFull || errors.Is(err, ErrTooLong), "write batch: %v", err)
				}
			case 7: // claim a batch, append, then commit, abort, or leave it open
				count := 1 + in.next()%3
				lengths := make([]int, count)
				size := 0
				for i := range lengths {
					lengths[i] = in.next() % (max + 1)
					size += RecordSize(lengths[i])
				}
				b, err := r.TryClaimBatch(size + 8*(in.next()%2))
				if err != nil {
					check(err == ErrFull || errors.Is(err, ErrTooLong), "claim batch: %v", err)
					continue
				}
				group := make([]*modelEntry, count)
				for i, l := range lengths {
					p := m.payload(l)
					dst, err := b.Append(6, l)
					check(err == nil, "append: %v", err)
					copy(dst, p)
					group[i] = &modelEntry{typeID: 6, payload: p, batch: &b}
				}
				m.addGroup(group)
				err = completeGroup(group, in.next()%3,
					func() error { return r.CommitBatch(b) }, func() error { return r.AbortBatch(b) })
				check(err == nil, "complete batch: %v", err)
			case 8: // claim records, fill them, then commit, abort, or leave them open
				count := 1 + in.next()%3
				length := in.next() % (max + 1)
				rs, err := r.TryClaimRecords(8, length, count)
				if err != nil {
					check(err == ErrFull || errors.Is(err, ErrTooLong), "claim records: %v", err)
					continue
				}
				check(rs.Len() == count, "records: Len %d, want %d", rs.Len(), count)
				group := make([]*modelEntry, count)
				for i := range group {
					p := m.payload(length)
					dst := rs.Payload(i)
					check(len(dst) == length, "records: payload of %d bytes, want %d", len(dst), length)
					copy(dst, p)
					group[i] = &modelEntry{typeID: 8, payload: p, records: &rs}
				}
				m.addGroup(group)
				err = completeGroup(group, in.next()%3,
					func() error { return r.CommitRecords(rs) }, func() error { return r.AbortRecords(rs) })
				check(err == nil, "complete records: %v", err)
			}
			// Complete open batches when asked, so the ring can drain.
			if in.next()%16 == 0 {
				for _, e := range m.entries {
					if e.state == 0 && e.group != nil && e.group[0] == e {
						check(commitGroup(r, e) == nil, "late batch commit")
						for _, g := range e.group {
							g.state = 1
						}
					}
				}
			}
			size := r.Size()
			check(size >= 0 && size <= capacity, "size %d outside [0, %d]", size, capacity)
		}
		// Complete everything, then a full drain must deliver exactly what
		// the model says.
		for _, e := range m.entries {
			if e.state == 0 {
				if e.group != nil {
					if e.group[0] == e {
						check(commitGroup(r, e) == nil, "final batch commit")
						for _, g := range e.group {
							g.state = 1
						}
					}
					continue
				}
				check(r.Commit(e.claim.Index) == nil, "final commit")
				e.state = 1
			}
		}
		got := drain(t, r)
		want := m.deliverable()
		check(len(got) == len(want), "final drain: %d messages, want %d", len(got), len(want))
		expectDelivered(got, 0)
		check(r.Size() == 0, "size %d after the final drain", r.Size())
		check(r.ProducerPosition() == r.ConsumerPosition(), "positions differ after the final drain")
		_ = fmt.Sprint
	})
}

// FuzzReadCorruptRing fills a ring's records and trailer with arbitrary
// bytes, as a hostile or crashed process could: reads and unblocks return
// messages or ErrCorrupt, and never panic or loop forever.
func FuzzReadCorruptRing(f *testing.F) {
	f.Add([]byte{13, 0, 0, 0, 1, 0, 0, 0}, uint64(0), uint64(0))
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 1, 0, 0, 0}, uint64(0), uint64(64))
	f.Add([]byte{0xf0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, uint64(3), uint64(8))
	// Headers no producer writes, with the tail just past them: shorter
	// than a header, padding short of the ring's end, a record that runs
	// past it, and a committed record then one claimed and never written
	// (what Unblock pads).
	f.Add([]byte{4, 0, 0, 0, 1, 0, 0, 0}, uint64(0), uint64(8))
	f.Add([]byte{16, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}, uint64(0), uint64(16))
	f.Add(append(make([]byte, 248), 24, 0, 0, 0, 1, 0, 0, 0), uint64(248), uint64(272))
	f.Add([]byte{9, 0, 0, 0, 1, 0, 0, 0, 'x', 0, 0, 0, 0, 0, 0, 0}, uint64(0), uint64(64))
	// Positions no ring reaches: the tail behind the head, and the tail
	// more than a capacity ahead of it.
	f.Add([]byte{13, 0, 0, 0, 1, 0, 0, 0}, uint64(64), uint64(8))
	f.Add([]byte{13, 0, 0, 0, 1, 0, 0, 0}, uint64(0), uint64(1<<20))
	f.Fuzz(func(t *testing.T, records []byte, head, tail uint64) {
		for _, k := range kinds {
			r := newRing(t, k, 256)
			buf := r.Buffer()
			copy(buf[:256], records)
			putLE64(buf, 256+headPositionOffset, int64(head))
			putLE64(buf, 256+tailPositionOffset, int64(tail))
			for i := 0; i < 4; i++ {
				_, err := r.Read(func(int32, []byte) {}, NoLimit)
				if err != nil && !errors.Is(err, ErrCorrupt) {
					t.Fatalf("read: unexpected error %v", err)
				}
				_, err = r.ControlledRead(func(int32, []byte) Action { return Commit }, NoLimit)
				if err != nil && !errors.Is(err, ErrCorrupt) {
					t.Fatalf("controlled read: unexpected error %v", err)
				}
				if _, err := unblock(r); err != nil && !errors.Is(err, ErrCorrupt) {
					t.Fatalf("unblock: unexpected error %v", err)
				}
			}
			err := r.Write(1, []byte("x"))
			if err != nil && err != ErrFull && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("write: unexpected error %v", err)
			}
			_ = r.Size()
		}
	})
}

// FuzzCorruptRingProducers is FuzzReadCorruptRing for the producer side and
// the consumer's recovery: over arbitrary records and trailer, claims,
// batches, records, commits and aborts of arbitrary indices, a read whose
// handler panics followed by a rewritten head, and reads after all that,
// return results or the package's sentinels, and never panic or loop.
func FuzzCorruptRingProducers(f *testing.F) {
	f.Add([]byte{0xf0, 0xff, 0xff, 0xff, 1, 0, 0, 0}, uint64(0), uint64(16), 8, uint64(0))
	f.Add([]byte{16, 0, 0, 0, 1, 0, 0, 0, 16, 0, 0, 0, 1, 0, 0, 0}, uint64(0), uint64(32), 16, uint64(200))
	f.Add([]byte{0xe0, 0xff, 0xff, 0xff, 0, 0, 0, 0}, uint64(248), uint64(256), 256, uint64(8))
	// Indices no claim returns (negative, unaligned, past the ring), and
	// a head ahead of the tail.
	f.Add([]byte{16, 0, 0, 0, 1, 0, 0, 0}, uint64(0), uint64(16), -8, uint64(0))
	f.Add([]byte{0xf0, 0xff, 0xff, 0xff, 1, 0, 0, 0}, uint64(0), uint64(16), 3, uint64(0))
	f.Add([]byte{}, uint64(64), uint64(8), 1<<20, uint64(1<<40))
	f.Fuzz(func(t *testing.T, records []byte, head, tail uint64, index int, head2 uint64) {
		allowed := func(err error) bool {
			for _, s := range []error{ErrFull, ErrCorrupt, record.ErrIndex, ErrNotClaimed, ErrTooLong, ErrLength} {
				if errors.Is(err, s) {
					return true
				}
			}
			return err == nil
		}
		for _, k := range kinds {
			r := newRing(t, k, 256)
			buf := r.Buffer()
			copy(buf[:256], records)
			putLE64(buf, 256+headPositionOffset, int64(head))
			putLE64(buf, 256+tailPositionOffset, int64(tail))
			r, err := k.new(buf) // a view over the existing ring
			if err != nil {
				t.Fatal(err)
			}
			for _, err := range []error{r.Commit(index), r.Abort(index)} {
				if !allowed(err) {
					t.Fatalf("commit/abort %d: %v", index, err)
				}
			}
			if c, err := r.TryClaim(1, 8); err == nil {
				if err := r.Commit(c.Index); !allowed(err) {
					t.Fatalf("commit: %v", err)
				}
			} else if !allowed(err) {
				t.Fatalf("claim: %v", err)
			}
			if b, err := r.TryClaimBatch(32); err == nil {
				if _, err := b.Append(2, 8); !allowed(err) {
					t.Fatalf("append: %v", err)
				}
				if err := r.CommitBatch(b); !allowed(err) {
					t.Fatalf("commit batch: %v", err)
				}
			} else if !allowed(err) {
				t.Fatalf("claim batch: %v", err)
			}
			if rs, err := r.TryClaimRecords(3, 4, 2); err == nil {
				if err := r.AbortRecords(rs); !allowed(err) {
					t.Fatalf("abort records: %v", err)
				}
			} else if !allowed(err) {
				t.Fatalf("claim records: %v", err)
			}
			if err := r.WriteBatch(4, [][]byte{{1}, {2, 3}}); !allowed(err) {
				t.Fatalf("write batch: %v", err)
			}
			func() {
				defer func() { _ = recover() }()
				_, err := r.Read(func(int32, []byte) { panic("handler") }, NoLimit)
				if !allowed(err) {
					t.Fatalf("read: %v", err)
				}
			}()
			putLE64(buf, 256+headPositionOffset, int64(head2))
			for range 3 {
				if _, err := r.Read(func(int32, []byte) {}, NoLimit); !allowed(err) {
					t.Fatalf("read: %v", err)
				}
				if _, err := r.ControlledRead(func(int32, []byte) Action { return Abort }, NoLimit); !allowed(err) {
					t.Fatalf("controlled read: %v", err)
				}
				if _, err := unblock(r); !allowed(err) {
					t.Fatalf("unblock: %v", err)
				}
			}
			_ = r.Size()
		}
	})
}
