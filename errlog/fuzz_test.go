package errlog

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// FuzzRead runs Read, HasErrors and New over arbitrary buffers: nothing
// may panic or hang, every error must be ErrCorrupt, every observation
// must lie inside the buffer, and a buffer New accepts must stay readable
// after a Record.
func FuzzRead(f *testing.F) {
	seed := newBuf(512)
	l, _ := New(seed)
	l.Record(errors.New("seed"))
	l.Record(fmt.Errorf("wrapped: %w", errors.New("seed")))
	f.Add(seed[:l.next+8])
	f.Add([]byte{24, 0, 0, 0})
	f.Add([]byte{23, 0, 0, 0, 1, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f})
	f.Add([]byte{32, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'})

	f.Fuzz(func(t *testing.T, data []byte) {
		buf := newBuf(len(data))
		copy(buf, data)
		n, err := Read(buf, 0, func(o Observation) {
			if len(o.Text) > len(buf)-headerLength {
				t.Fatalf("text of %d bytes in a %d-byte buffer", len(o.Text), len(buf))
			}
		})
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("unexpected error %v", err)
		}
		if n > len(buf)/recordAlignment {
			t.Fatalf("%d observations in %d bytes", n, len(buf))
		}
		if HasErrors(buf) != (len(buf) >= 4 && int32(uint32(buf[0])|uint32(buf[1])<<8|uint32(buf[2])<<16|uint32(buf[3])<<24) > 0) {
			t.Fatal("HasErrors")
		}
		l, nerr := New(buf)
		if (nerr == nil) != (err == nil) {
			t.Fatalf("New: %v, Read: %v", nerr, err)
		}
		if nerr != nil {
			return
		}
		ok := l.Record(errors.New("fuzz"))
		m, err := Read(buf, 0, func(Observation) {})
		if err != nil {
			t.Fatalf("Read after Record: %v", err)
		}
		want := n
		if ok {
			want++
		}
		if m != want {
			t.Fatalf("%d observations after Record (%v), %d before", m, ok, n)
		}
	})
}

// modelEntry is the model's view of one observation.
type modelEntry struct {
	head        string // the text's lines other than the call site's
	count       int64
	first, last int64
}

// FuzzRecord records a sequence of errors (random messages, plain or
// wrapped, at a clock that may go backwards) into a log of random capacity
// and checks every result and the final log against a model: a list of
// distinct observations, which fit while the space used plus the record's
// length stays within the capacity. A second log, large enough for
// everything, is recorded into from the same call site and tells the model
// how long the call site's part of a text is.
func FuzzRecord(f *testing.F) {
	f.Add(uint16(300), []byte("aaaabbbbaaaa"))
	f.Add(uint16(4096), []byte{0, 1, 2, 3, 0x80, 0x81, 0x82, 0x40, 0xc1})
	f.Add(uint16(0), []byte{1})
	f.Add(uint16(700), []byte("a long enough sequence of operations to fill a small log"))

	f.Fuzz(fuzzRecordBody)
}

// fuzzRecordBody is FuzzRecord's body: one run of a sequence of ops.
func fuzzRecordBody(t *testing.T, capacity uint16, ops []byte) {
	if len(ops) > 512 {
		ops = ops[:512]
	}
	buf := newBuf(int(capacity))
	clock := newClock(1000)
	l := mustLog(t, buf, WithClock(clock))
	probe := mustLog(t, newBuf(1<<16), WithClock(clock)) // room for every distinct observation ops can make
	logs := []*Log{probe, l}

	var model []modelEntry
	index := map[string]int{}
	siteLen, used := -1, 0
	for _, op := range ops {
		clock.Set(clock.Now() + int64(int8(op))/8)
		msg := fmt.Sprintf("m%d", op&7)
		var err error
		head := "*errors.errorString: " + msg + "\n"
		if op&8 != 0 {
			err = fmt.Errorf("w: %w", errors.New(msg))
			head = "*fmt.wrapError: w: " + msg + "\n" + "caused by: *errors.errorString: " + msg + "\n"
		} else {
			err = errors.New(msg)
		}
		if op&0x30 == 0x30 {
			msg += strings.Repeat("x", int(op>>6)*40) // longer texts too
			err = errors.New(msg)
			head = "*errors.errorString: " + msg + "\n"
		}
		var oks [2]bool
		for i, lg := range logs {
			oks[i] = lg.Record(err) // one call site for every record
		}
		if !oks[0] {
			t.Fatal("the large log is full")
		}
		if siteLen < 0 {
			obs := readAll(t, probe.buf.Bytes())
			siteLen = len(obs[0].Text) - len(head)
		}
		now := clock.Now()
		want := false
		if i, ok := index[head]; ok {
			e := &model[i]
			e.count++
			e.last = max(e.last, now)
			want = true
		} else if length := headerLength + len(head) + siteLen; used+length <= len(buf) {
			index[head] = len(model)
			model = append(model, modelEntry{head: head, count: 1, first: now, last: now})
			used += alignRecord(length)
			want = true
		}
		if oks[1] != want {
			t.Fatalf("Record(%q) = %v, model says %v (used %d of %d)", err, oks[1], want, used, len(buf))
		}
	}
	obs := readAll(t, buf)
	if len(obs) != len(model) {
		t.Fatalf("%d observations, model has %d", len(obs), len(model))
	}
	for i, o := range obs {
		e := model[i]
		first, rest, _ := strings.Cut(e.head, "\n")
		if !strings.HasPrefix(o.Text, first+"\n\tat ") || !strings.HasSuffix(o.Text, rest) ||
			len(o.Text) != len(e.head)+siteLen || o.Count != e.count ||
			o.First.UnixMilli() != e.first || o.Last.UnixMilli() != e.last {
			t.Fatalf("observation %d: %+v, model %+v", i, o, e)
		}
	}
}
