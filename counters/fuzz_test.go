package counters

import (
	"errors"
	"testing"

	"github.com/dutyrt/duty/internal/countertype"
)

// The fuzz input is compact so that the fuzzer mutates (and minimizes) only
// bytes that matter: per record, the first fuzzMeta bytes of its metadata
// (state, type id, deadline, key, label length and the label's start) and
// the first fuzzVals bytes of its value record.
const (
	fuzzMeta   = labelOffset + 28
	fuzzVals   = 32
	fuzzRecord = fuzzMeta + fuzzVals
)

func encodeFuzz(meta, vals []byte, n int) []byte {
	var out []byte
	for i := range n {
		out = append(out, meta[i*metadataRecordLength:i*metadataRecordLength+fuzzMeta]...)
		out = append(out, vals[i*valueRecordLength:i*valueRecordLength+fuzzVals]...)
	}
	return out
}

func decodeFuzz(n uint8, data []byte) (meta, vals []byte) {
	count := int(n%8) + 1
	meta, vals, _ = NewRegions(count)
	for i := 0; i < count && len(data) > 0; i++ {
		data = data[copy(meta[i*metadataRecordLength:i*metadataRecordLength+fuzzMeta], data):]
		data = data[copy(vals[i*valueRecordLength:i*valueRecordLength+fuzzVals], data):]
	}
	return meta, vals
}

// FuzzReader runs every read operation, and Recover followed by a few
// allocations and frees, over arbitrary metadata and values bytes: nothing
// may panic, every error must be one of the package's, and iteration must
// deliver only allocated records with labels within bounds.
func FuzzReader(f *testing.F) {
	// Seeds: a real manager's regions, with live, reclaimed and reused ids.
	meta, vals, _ := NewRegions(4)
	m, _ := NewManager(meta, vals, Config{})
	a, _ := m.Allocate("alpha", countertype.SubscriberPosition, []byte("key"))
	b, _ := m.Allocate("beta: a longer label", countertype.Errors, nil)
	_, _ = m.Allocate("gamma", 7, []byte{1, 2, 3, 4, 5})
	a.Set(99)
	_ = b.Close()
	f.Add(uint8(3), encodeFuzz(meta, vals, 4))
	f.Add(uint8(0), []byte{1, 0, 0, 0, 0xe8, 3, 0, 0})
	f.Add(uint8(1), []byte{0xff, 0xff, 0xff, 0xff})

	f.Fuzz(func(t *testing.T, n uint8, data []byte) {
		meta, vals := decodeFuzz(n, data)
		n = uint8(len(vals) / valueRecordLength)

		r, err := NewReader(meta, vals)
		if err != nil {
			t.Fatal(err)
		}
		check := func(err error) {
			t.Helper()
			if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrArgument) {
				t.Fatalf("unexpected error %v", err)
			}
		}
		visits := 0
		check(r.ForEachRecord(func(c Record) bool {
			visits++
			if c.State != StateAllocated || c.ID < 0 || c.ID > r.MaxCounterID() ||
				len(c.Label) > maxLabelLength || len(c.Key) != maxKeyLength {
				t.Fatalf("bad record %+v", c)
			}
			return true
		}))
		if visits > int(n) {
			t.Fatalf("%d visits over %d ids", visits, n)
		}
		check(r.forEach(func(int, int32, string, []byte, int64) bool { return true }))
		_, err = r.FindByRegistrationID(1)
		check(err)
		_, err = r.findByTypeIDAndRegistrationID(countertype.Errors, 2)
		check(err)
		for id := -1; id <= int(n); id++ {
			_, err = r.stateOf(id)
			check(err)
			_, err = r.labelOf(id)
			check(err)
			_, err = r.Value(id)
			check(err)
			_, err = r.keyOf(id)
			check(err)
		}

		mgr, _, err := Recover(meta, vals, Config{})
		if err != nil {
			check(err)
			return
		}
		for i := range 3 {
			c, err := mgr.Allocate("fuzz", 1, []byte{byte(i)})
			if err != nil {
				if !errors.Is(err, ErrFull) {
					t.Fatalf("allocate: %v", err)
				}
				break
			}
			if got := c.label(); got != "fuzz" {
				t.Fatalf("label %q after allocate", got)
			}
			if i == 1 {
				if err := c.Close(); err != nil {
					t.Fatalf("close: %v", err)
				}
			}
		}
		for id := range int(n) {
			if err := mgr.freeID(id); err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("free: %v", err)
			}
		}
	})
}
