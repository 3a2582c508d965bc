package counters

import (
	"encoding/binary"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
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
	require.NoError(t, r.ForEach(func(id int, typeID int32, label string, key []byte, value int64) bool {
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

	a := allocate(t, m, "sub-pos: mailbox orders", TypeSubscriberPosition, key8(11))
	b := allocate(t, m, "duty cycles: gateway", TypeDutyCycles, key8(22))
	c := allocate(t, m, "errors: gateway", TypeErrors, key8(33))
	a.Set(1000)
	b.Add(2)
	c.Increment()
	require.Equal(t, []seen{
		{0, TypeSubscriberPosition, "sub-pos: mailbox orders", key8(11), 1000},
		{1, TypeDutyCycles, "duty cycles: gateway", key8(22), 2},
		{2, TypeErrors, "errors: gateway", key8(33), 1},
	}, collect(t, r))

	// Reclaimed records are skipped; the scan continues past them.
	require.NoError(t, b.Close())
	require.Equal(t, []int{0, 2}, ids(collect(t, r)))

	// Early stop.
	n := 0
	require.NoError(t, r.ForEach(func(int, int32, string, []byte, int64) bool { n++; return false }))
	require.Equal(t, 1, n)

	// Per-id getters.
	label, err := r.Label(0)
	require.NoError(t, err)
	require.Equal(t, "sub-pos: mailbox orders", label)
	label, err = r.Label(1)
	require.NoError(t, err)
	require.Equal(t, "duty cycles: gateway", label, "a reclaimed record keeps its label until reuse")
	label, err = r.Label(5)
	require.NoError(t, err)
	require.Empty(t, label)
	reg, err := r.RegistrationID(2)
	require.NoError(t, err)
	require.Equal(t, c.RegistrationID(), reg)
	typeID, err := r.TypeID(2)
	require.NoError(t, err)
	require.Equal(t, TypeErrors, typeID)
	c.SetOwnerID(5)
	c.SetReferenceID(6)
	owner, err := r.ownerIDChecked(2)
	require.NoError(t, err)
	require.Equal(t, int64(5), owner)
	ref, err := r.referenceIDChecked(2)
	require.NoError(t, err)
	require.Equal(t, int64(6), ref)
	k, err := r.Key(1)
	require.NoError(t, err)
	require.Equal(t, make([]byte, MaxKeyLength), k, "free zeroes the key")

	// A process handed id 0 writes through its word.
	w, err := r.Word(0)
	require.NoError(t, err)
	w.Store(2000)
	require.Equal(t, int64(2000), a.Get())

	// Find.
	id, err := r.FindByRegistrationID(c.RegistrationID())
	require.NoError(t, err)
	require.Equal(t, 2, id)
	id, err = r.FindByTypeIDAndRegistrationID(TypeErrors, c.RegistrationID())
	require.NoError(t, err)
	require.Equal(t, 2, id)
	id, err = r.FindByTypeIDAndRegistrationID(TypeDutyCycles, c.RegistrationID())
	require.NoError(t, err)
	require.Equal(t, NullCounterID, id)
	id, err = r.FindByRegistrationID(b.RegistrationID())
	require.NoError(t, err)
	require.Equal(t, NullCounterID, id, "freed counters are not found")
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
	a.SetOwnerID(1)
	a.SetReferenceID(2)
	r := m.Reader()
	var got []Record
	require.NoError(t, r.ForEachRecord(func(c Record) bool {
		c.Key = append([]byte(nil), c.Key...)
		c.Label = append([]byte(nil), c.Label...)
		got = append(got, c)
		return true
	}))
	wantKey := make([]byte, MaxKeyLength)
	copy(wantKey, "kk")
	require.Equal(t, []Record{{
		ID: 0, State: StateAllocated, TypeID: 5, RegistrationID: 1, OwnerID: 1, ReferenceID: 2,
		Value: -7, Key: wantKey, Label: []byte("a"),
	}}, got)
}

func TestReaderOutOfRange(t *testing.T) {
	_, meta, vals := mustManager(t, 2, Config{})
	r, err := NewReader(meta, vals)
	require.NoError(t, err)
	for _, id := range []int{-1, 2, 1 << 40} {
		_, err := r.State(id)
		require.ErrorIs(t, err, ErrOutOfRange)
		require.ErrorContains(t, err, "maxCounterId=1")
		_, err = r.Value(id)
		require.ErrorIs(t, err, ErrOutOfRange)
		_, err = r.Label(id)
		require.ErrorIs(t, err, ErrOutOfRange)
		_, err = r.RegistrationID(id)
		require.ErrorIs(t, err, ErrOutOfRange)
		_, err = r.ownerIDChecked(id)
		require.ErrorIs(t, err, ErrOutOfRange)
		_, err = r.referenceIDChecked(id)
		require.ErrorIs(t, err, ErrOutOfRange)
		_, err = r.TypeID(id)
		require.ErrorIs(t, err, ErrOutOfRange)
		_, err = r.Key(id)
		require.ErrorIs(t, err, ErrOutOfRange)
		_, err = r.Word(id)
		require.ErrorIs(t, err, ErrOutOfRange)
		_, err = r.FreeForReuseDeadline(id)
		require.ErrorIs(t, err, ErrOutOfRange)
	}
}

func TestReaderCorrupt(t *testing.T) {
	m, meta, vals := mustManager(t, 4, Config{})
	allocate(t, m, "a", 1, nil)
	allocate(t, m, "b", 1, nil)
	r, err := NewReader(meta, vals)
	require.NoError(t, err)

	for _, bad := range []int32{-1, MaxLabelLength + 1, 1 << 31 >> 1} {
		put32(meta, 512+labelLengthOffset, bad)
		var got []string
		err = r.ForEach(func(_ int, _ int32, label string, _ []byte, _ int64) bool {
			got = append(got, label)
			return true
		})
		require.ErrorIs(t, err, ErrCorrupt)
		require.ErrorContains(t, err, "counter 1: label length")
		require.Equal(t, []string{"a"}, got, "records before the corrupt one are delivered")
		_, err = r.Label(1)
		require.ErrorIs(t, err, ErrCorrupt)
	}
	put32(meta, 512+labelLengthOffset, 1)

	put32(meta, 512+stateOffset, 3)
	require.ErrorIs(t, r.ForEach(func(int, int32, string, []byte, int64) bool { return true }), ErrCorrupt)
	_, err = r.State(1)
	require.ErrorIs(t, err, ErrCorrupt)
	_, err = r.FindByRegistrationID(99)
	require.ErrorIs(t, err, ErrCorrupt)
	id, err := r.FindByRegistrationID(1)
	require.NoError(t, err, "found before reaching the corrupt record")
	require.Equal(t, 0, id)
}

func TestTypeName(t *testing.T) {
	require.Equal(t, "sub-pos", TypeName(TypeSubscriberPosition))
	require.Equal(t, "lapped-receivers", TypeName(typeLappedReceivers))
	require.Equal(t, "42", TypeName(42))
	seenNames := map[string]bool{}
	for id := typeIDDutyMin; id <= typeIDDutyMax; id++ {
		if n, ok := typeNames[id]; ok {
			require.False(t, seenNames[n], "duplicate name %q", n)
			seenNames[n] = true
		}
	}
	require.Len(t, seenNames, len(typeNames), "every duty type id lies in the reserved range")
}

func TestKinds(t *testing.T) {
	require.Equal(t, KindCounter, KindOf(TypeDelivered))
	require.Equal(t, KindCounter, KindOf(TypeSubscriberPosition))
	require.Equal(t, KindGauge, KindOf(TypeMailboxDepth))
	require.Equal(t, KindGauge, KindOf(TypeLongestCycleNs))
	require.Equal(t, KindTimestamp, KindOf(TypeHeartbeat))
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
	require.Equal(t, KindCounter, KindOf(TypeIDUserMin), "a user type id not made by UserType")
	require.Equal(t, "gauge", KindGauge.String())
}
