package counters

import (
	"encoding/binary"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/countertype"
)

type seen struct {
	id     int
	typeID int32
	label  string
	key    []byte
	value  int64
}

func collect(t testing.TB, r *Reader) []seen {
	t.Helper()
	var got []seen
	require.NoError(t, r.forEach(func(id int, typeID int32, label string, key []byte, value int64) bool {
		got = append(got, seen{id, typeID, label, append([]byte(nil), key[:8]...), value})
		return true
	}))
	return got
}

func key8(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func TestReaderOverSameBytes(t *testing.T) {
	m, meta, vals := mustManager(t, 8, Config{})
	r, err := NewReader(meta, vals) // as another process would
	require.NoError(t, err)
	require.Equal(t, 7, r.MaxCounterID())
	require.Empty(t, collect(t, r))

	a := allocate(t, m, "sub-pos: mailbox orders", countertype.SubscriberPosition, key8(11))
	b := allocate(t, m, "duty cycles: gateway", countertype.DutyCycles, key8(22))
	c := allocate(t, m, "errors: gateway", countertype.Errors, key8(33))
	a.Set(1000)
	b.Add(2)
	c.Add(1)
	require.Equal(t, []seen{
		{0, countertype.SubscriberPosition, "sub-pos: mailbox orders", key8(11), 1000},
		{1, countertype.DutyCycles, "duty cycles: gateway", key8(22), 2},
		{2, countertype.Errors, "errors: gateway", key8(33), 1},
	}, collect(t, r))

	// Reclaimed records are skipped; the scan continues past them.
	require.NoError(t, b.Close())
	require.Equal(t, []int{0, 2}, ids(collect(t, r)))

	// Early stop.
	n := 0
	require.NoError(t, r.forEach(func(int, int32, string, []byte, int64) bool { n++; return false }))
	require.Equal(t, 1, n)

	// Per-id getters.
	label, err := r.labelOf(0)
	require.NoError(t, err)
	require.Equal(t, "sub-pos: mailbox orders", label)
	label, err = r.labelOf(1)
	require.NoError(t, err)
	require.Equal(t, "duty cycles: gateway", label, "a reclaimed record keeps its label until reuse")
	label, err = r.labelOf(5)
	require.NoError(t, err)
	require.Empty(t, label)
	reg, err := r.registrationIDOf(2)
	require.NoError(t, err)
	require.Equal(t, c.RegistrationID(), reg)
	typeID, err := r.typeIDOf(2)
	require.NoError(t, err)
	require.Equal(t, countertype.Errors, typeID)
	c.setOwnerID(5)
	c.setReferenceID(6)
	owner, err := r.ownerIDChecked(2)
	require.NoError(t, err)
	require.Equal(t, int64(5), owner)
	ref, err := r.referenceIDChecked(2)
	require.NoError(t, err)
	require.Equal(t, int64(6), ref)
	k, err := r.keyOf(1)
	require.NoError(t, err)
	require.Equal(t, make([]byte, maxKeyLength), k, "free zeroes the key")

	// A process handed id 0 writes through its word.
	w, err := r.Word(0)
	require.NoError(t, err)
	w.Store(2000)
	require.Equal(t, int64(2000), a.Get())

	// Find.
	id, err := r.FindByRegistrationID(c.RegistrationID())
	require.NoError(t, err)
	require.Equal(t, 2, id)
	id, err = r.findByTypeIDAndRegistrationID(countertype.Errors, c.RegistrationID())
	require.NoError(t, err)
	require.Equal(t, 2, id)
	id, err = r.findByTypeIDAndRegistrationID(countertype.DutyCycles, c.RegistrationID())
	require.NoError(t, err)
	require.Equal(t, nullCounterID, id)
	id, err = r.FindByRegistrationID(b.RegistrationID())
	require.NoError(t, err)
	require.Equal(t, nullCounterID, id, "freed counters are not found")
}

func ids(s []seen) []int {
	var out []int
	for _, x := range s {
		out = append(out, x.id)
	}
	return out
}

func TestReaderForEachRecord(t *testing.T) {
	m, _, _ := mustManager(t, 4, Config{})
	a := allocate(t, m, "a", 5, []byte("kk"))
	a.Set(-7)
	a.setOwnerID(1)
	a.setReferenceID(2)
	r := m.Reader()
	var got []Record
	require.NoError(t, r.ForEachRecord(func(c Record) bool {
		c.Key = append([]byte(nil), c.Key...)
		c.Label = append([]byte(nil), c.Label...)
		got = append(got, c)
		return true
	}))
	wantKey := make([]byte, maxKeyLength)
	copy(wantKey, "kk")
	require.Equal(t, []Record{{
		ID: 0, State: StateAllocated, TypeID: 5, RegistrationID: 1, OwnerID: 1, ReferenceID: 2, FreeForReuseDeadline: notFreeToReuse,
		Value: -7, Key: wantKey, Label: []byte("a"),
	}}, got)
}

func TestReaderOutOfRange(t *testing.T) {
	_, meta, vals := mustManager(t, 2, Config{})
	r, err := NewReader(meta, vals)
	require.NoError(t, err)
	for _, id := range []int{-1, 2, 1 << 40} {
		_, err := r.stateOf(id)
		require.ErrorIs(t, err, ErrArgument)
		require.ErrorContains(t, err, "maxCounterId=1")
		_, err = r.Value(id)
		require.ErrorIs(t, err, ErrArgument)
		_, err = r.labelOf(id)
		require.ErrorIs(t, err, ErrArgument)
		_, err = r.registrationIDOf(id)
		require.ErrorIs(t, err, ErrArgument)
		_, err = r.ownerIDChecked(id)
		require.ErrorIs(t, err, ErrArgument)
		_, err = r.referenceIDChecked(id)
		require.ErrorIs(t, err, ErrArgument)
		_, err = r.typeIDOf(id)
		require.ErrorIs(t, err, ErrArgument)
		_, err = r.keyOf(id)
		require.ErrorIs(t, err, ErrArgument)
		_, err = r.Word(id)
		require.ErrorIs(t, err, ErrArgument)
		_, err = r.deadlineOf(id)
		require.ErrorIs(t, err, ErrArgument)
	}
}

func TestReaderCorrupt(t *testing.T) {
	m, meta, vals := mustManager(t, 4, Config{})
	allocate(t, m, "a", 1, nil)
	allocate(t, m, "b", 1, nil)
	r, err := NewReader(meta, vals)
	require.NoError(t, err)

	for _, bad := range []int32{-1, maxLabelLength + 1, 1 << 31 >> 1} {
		put32(meta, 512+labelLengthOffset, bad)
		var got []string
		err = r.forEach(func(_ int, _ int32, label string, _ []byte, _ int64) bool {
			got = append(got, label)
			return true
		})
		require.ErrorIs(t, err, ErrCorrupt)
		require.ErrorContains(t, err, "counter 1: label length")
		require.Equal(t, []string{"a"}, got, "records before the corrupt one are delivered")
		_, err = r.labelOf(1)
		require.ErrorIs(t, err, ErrCorrupt)
	}
	put32(meta, 512+labelLengthOffset, 1)

	put32(meta, 512+stateOffset, 3)
	require.ErrorIs(t, r.forEach(func(int, int32, string, []byte, int64) bool { return true }), ErrCorrupt)
	_, err = r.stateOf(1)
	require.ErrorIs(t, err, ErrCorrupt)
	_, err = r.FindByRegistrationID(99)
	require.ErrorIs(t, err, ErrCorrupt)
	id, err := r.FindByRegistrationID(1)
	require.NoError(t, err, "found before reaching the corrupt record")
	require.Equal(t, 0, id)
}

func TestTypeName(t *testing.T) {
	require.Equal(t, "sub-pos", TypeName(countertype.SubscriberPosition))
	require.Equal(t, "lapped-receivers", TypeName(countertype.LappedReceivers))
	require.Equal(t, "42", TypeName(42))
	seenNames := map[string]bool{}
	for id := countertype.DutyMin; id <= countertype.DutyMax; id++ {
		if n, ok := typeNames[id]; ok {
			require.False(t, seenNames[n], "duplicate name %q", n)
			seenNames[n] = true
		}
	}
	require.Len(t, seenNames, len(typeNames), "every duty type id lies in the reserved range")
}

func TestKinds(t *testing.T) {
	require.Equal(t, KindCounter, KindOf(countertype.Delivered))
	require.Equal(t, KindCounter, KindOf(countertype.SubscriberPosition))
	require.Equal(t, KindGauge, KindOf(countertype.MailboxDepth))
	require.Equal(t, KindGauge, KindOf(countertype.LongestCycleNs))
	require.Equal(t, KindTimestamp, KindOf(countertype.Heartbeat))
	require.Equal(t, KindCounter, KindOf(42), "an Agrona or Aeron type")
	for n := range int32(5) {
		for _, k := range []Kind{KindCounter, KindGauge, KindTimestamp} {
			typ := UserType(n, k)
			require.Equal(t, k, KindOf(typ))
			got, ok := userTypeNumber(typ)
			require.True(t, ok)
			require.Equal(t, n, got)
			require.Equal(t, "user:"+strconv.Itoa(int(n)), TypeName(typ))
		}
	}
	require.Equal(t, KindCounter, KindOf(countertype.UserMin), "a user type id not made by UserType")
	require.Equal(t, "gauge", KindGauge.String())
}
