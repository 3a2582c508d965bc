package queue

// Pipe is what every queue of this package offers, Agrona's Pipe plus
// Offer and Poll. Which goroutines may call which method depends on the
// queue: see the package documentation.
type Pipe[T any] interface {
	Offer(v T) bool
	Poll() (T, bool)
	Drain(fn func(T), limit int) int
	DrainTo(dst []T, limit int) []T
	Size() int
	Capacity() int
	RemainingCapacity() int
	IsEmpty() bool
	AddedCount() int64
	RemovedCount() int64
}

var (
	_ Pipe[int] = (*OneToOne[int])(nil)
	_ Pipe[int] = (*ManyToOne[int])(nil)
	_ Pipe[int] = (*ManyToMany[int])(nil)
)
