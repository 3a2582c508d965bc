package counters

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/countertype"
)

func TestCounterOpsDoNotAllocate(t *testing.T) {
	m, _, _ := mustManager(t, 2, Config{})
	c := allocate(t, m, "hot", countertype.TotalWork, nil)
	var sink int64
	allocs := testing.AllocsPerRun(1000, func() {
		sink += c.Get()
		c.Set(sink)
		sink += c.Add(2)
		sink += c.Add(1)
		sink += c.AddSingleWriter(3)
		sink += c.AddSingleWriter(1)
		if c.ProposeMax(sink) {
			sink++
		}
		c.Word().Add(1)
		sink += int64(c.ID()) + c.RegistrationID()
	})
	require.Zero(t, allocs)
	require.NotZero(t, sink)
}

func TestReaderDoesNotAllocate(t *testing.T) {
	m, _, _ := mustManager(t, 8, Config{})
	for i := range 6 {
		c := allocate(t, m, "label of a counter", int32(i), []byte("key"))
		c.Set(int64(i))
	}
	require.NoError(t, m.freeID(2))
	r := m.Reader()
	var sum int64
	var labels int
	allocs := testing.AllocsPerRun(1000, func() {
		err := r.ForEachRecord(func(c Record) bool {
			sum += c.Value
			labels += len(c.Label) + len(c.Key)
			return true
		})
		if err != nil {
			panic(err)
		}
		v, _ := r.Value(3)
		s, reg := r.state(3), r.registrationID(3)
		sum += v + int64(s) + reg
	})
	require.Zero(t, allocs)
	require.NotZero(t, sum)
	require.NotZero(t, labels)
}
