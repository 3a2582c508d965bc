package queue

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// kind is one of the three queues, built for any element type.
type kind struct {
	name string
	// multiConsumer: Poll may be called concurrently.
	multiConsumer bool
	minCapacity   int
}

var kinds = []kind{
	{name: "OneToOne", minCapacity: 1},
	{name: "ManyToOne", minCapacity: 1},
	{name: "ManyToMany", minCapacity: 2, multiConsumer: true},
}

// testPipe is Pipe plus the unexported counters every queue keeps for its
// tests.
type testPipe[T any] interface {
	Pipe[T]
	isEmpty() bool
	addedCount() int64
	removedCount() int64
}

func newPipe[T any](tb testing.TB, k kind, capacity int) testPipe[T] {
	tb.Helper()
	p, err := tryNew[T](k, capacity)
	require.NoError(tb, err)
	return p
}

func tryNew[T any](k kind, capacity int) (testPipe[T], error) {
	switch k.name {
	case "OneToOne":
		return NewOneToOne[T](capacity)
	case "ManyToOne":
		return NewManyToOne[T](capacity)
	default:
		return NewManyToMany[T](capacity)
	}
}

// slotValues returns the values held by the slots of p (consumed slots hold
// the zero value).
func slotValues[T any](p testPipe[T]) []T {
	var out []T
	switch q := p.(type) {
	case *OneToOne[T]:
		out = append(out, q.buf...)
	case *ManyToOne[T]:
		for i := range q.buf {
			out = append(out, q.buf[i].v)
		}
	case *ManyToMany[T]:
		for i := range q.buf {
			out = append(out, q.buf[i].v)
		}
	}
	return out
}
