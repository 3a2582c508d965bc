package queue

import (
	"slices"
	"testing"
)

// The model of a queue: the values offered and not yet removed, in claim
// order, each published or not (a many-producer offer half done). The
// consumer may remove the published prefix.
type modelEntry struct {
	v         int64
	published bool
	pos       int64
}

type model struct {
	capacity int
	entries  []modelEntry
	added    int64
	removed  int64
}

func (m *model) deliverable() int {
	n := 0
	for n < len(m.entries) && m.entries[n].published {
		n++
	}
	return n
}

// claimer is the first half of an Offer of a many-producer queue: claim a
// position (tail) without publishing the value. publish is the second.
type claimer interface {
	claim() int64
	publish(pos int64, v int64)
}

func (q *ManyToOne[T]) claim() int64  { return q.tail.Add(1) - 1 }
func (q *ManyToMany[T]) claim() int64 { return q.tail.Add(1) - 1 }
func (q *ManyToOne[T]) publishAt(pos int64, v T) {
	s := &q.buf[pos&q.mask]
	s.v = v
	s.seq.Store(pos + 1)
}
func (q *ManyToMany[T]) publishAt(pos int64, v T) {
	s := &q.buf[pos&q.mask]
	s.v = v
	s.seq.Store(pos + 1)
}

type m2oClaimer struct{ *ManyToOne[int64] }
type m2mClaimer struct{ *ManyToMany[int64] }

func (c m2oClaimer) publish(pos, v int64) { c.publishAt(pos, v) }
func (c m2mClaimer) publish(pos, v int64) { c.publishAt(pos, v) }

// runModel drives p with the operations encoded in ops and compares every
// result with the model.
func runModel(t *testing.T, p testPipe[int64], cl claimer, ops []byte) {
	m := &model{capacity: p.Capacity()}
	next := int64(1)
	step := 0
	check := func(what string, ok bool, got, want any) {
		t.Helper()
		if !ok {
			t.Fatalf("op %d %s: got %v, want %v (model %+v)", step, what, got, want, m)
		}
	}
	eq := func(what string, got, want int64) { t.Helper(); check(what, got == want, got, want) }
	eqs := func(what string, got, want []int64) { t.Helper(); check(what, slices.Equal(got, want), got, want) }
	remove := func(n int) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = m.entries[i].v
		}
		m.entries = m.entries[n:]
		m.removed += int64(n)
		return out
	}
	for i, op := range ops {
		step = i
		arg := int(op >> 3)
		switch op & 7 {
		case 0, 1: // Offer
			ok := p.Offer(next)
			want := len(m.entries) < m.capacity
			check("offer", ok == want, ok, want)
			if ok {
				m.entries = append(m.entries, modelEntry{v: next, published: true, pos: m.added})
				m.added++
				next++
			}
		case 2: // Poll
			v, ok := p.Poll()
			if m.deliverable() > 0 {
				w := remove(1)[0]
				check("poll", ok && v == w, v, w)
			} else {
				check("poll of nothing", !ok && v == 0, v, ok)
			}
		case 3: // Drain with a limit
			var got []int64
			n := p.Drain(func(v int64) { got = append(got, v) }, arg-4)
			want := remove(min(max(arg-4, 0), m.deliverable()))
			eq("drain count", int64(n), int64(len(want)))
			eqs("drain", got, want)
		case 4: // DrainTo with a limit, appending to a non-empty slice
			got := p.DrainTo([]int64{-1}, arg)
			want := append([]int64{-1}, remove(min(arg, m.deliverable()))...)
			eqs("drainTo", got, want)
		case 5: // Half an offer: claim only (many-producer queues)
			if cl == nil || len(m.entries) >= m.capacity {
				continue
			}
			pos := cl.claim()
			eq("claim", pos, m.added)
			m.entries = append(m.entries, modelEntry{v: next, pos: pos})
			m.added++
			next++
		case 6: // Complete a half-done offer, chosen by arg
			var open []int
			for j, e := range m.entries {
				if !e.published {
					open = append(open, j)
				}
			}
			if len(open) == 0 {
				continue
			}
			e := &m.entries[open[arg%len(open)]]
			cl.publish(e.pos, e.v)
			e.published = true
		case 7: // Drain everything
			got := p.DrainTo(nil, 1<<30)
			eqs("drain all", got, remove(m.deliverable()))
		}
		eq("size", int64(p.Size()), int64(len(m.entries)))
		eq("remaining", int64((p.Capacity() - p.Size())), int64(m.capacity-len(m.entries)))
		check("empty", p.isEmpty() == (len(m.entries) == 0), p.isEmpty(), len(m.entries))
		eq("added", p.addedCount(), m.added)
		eq("removed", p.removedCount(), m.removed)
	}
	// Every removed value left a zero slot behind; every queued one is in
	// its slot.
	slots := slotValues(p)
	var live []int64
	for j := range slots {
		if slots[j] != 0 {
			live = append(live, slots[j])
		}
	}
	var want []int64
	for _, e := range m.entries {
		if e.published {
			want = append(want, e.v)
		}
	}
	slices.Sort(live)
	slices.Sort(want)
	eqs("slots", live, want)
}

func fuzzSeeds(f *testing.F) {
	f.Add(uint8(4), []byte{0, 0, 0, 0, 0, 2, 2, 3 | 6<<3, 0, 4 | 2<<3, 7})
	f.Add(uint8(1), []byte{0, 0, 2, 2, 0, 3 | 5<<3, 0, 4 | 1<<3})
	f.Add(uint8(3), []byte{0, 5, 0, 2, 7, 6, 2, 7, 5, 5, 0, 6 | 1<<3, 7, 6, 7})
	f.Add(uint8(0), []byte{0, 0, 0, 2, 0, 0, 7, 5, 5, 0, 6, 6, 2, 2})
	f.Add(uint8(3), []byte{0, 0, 0, 0, 0, 0, 2, 0, 0, 4 | 3<<3, 0, 0, 0, 0, 0})
	f.Add(uint8(8), []byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 7, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3 | 31<<3})
}

func FuzzOneToOne(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, capacity uint8, ops []byte) {
		p, err := NewOneToOne[int64](int(capacity%17) + 1)
		if err != nil {
			t.Fatal(err)
		}
		runModel(t, p, nil, ops)
	})
}

func FuzzManyToOne(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, capacity uint8, ops []byte) {
		p, err := NewManyToOne[int64](int(capacity%17) + 1)
		if err != nil {
			t.Fatal(err)
		}
		runModel(t, p, m2oClaimer{p}, ops)
	})
}

func FuzzManyToMany(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, capacity uint8, ops []byte) {
		p, err := NewManyToMany[int64](int(capacity%16) + 2)
		if err != nil {
			t.Fatal(err)
		}
		runModel(t, p, m2mClaimer{p}, ops)
	})
}
