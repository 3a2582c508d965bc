package queue

// Pipe is what every queue of this package offers: Offer and Poll, and
// the drain and size methods of Agrona's Pipe. Which goroutines may call which method depends on the
// queue: see the package documentation.
type Pipe[T any] interface {
	Offer(v T) bool
	Poll() (T, bool)
	Drain(fn func(T), limit int) int
	DrainTo(dst []T, limit int) []T
	Size() int
	Capacity() int
}

var (
	_ Pipe[int] = (*OneToOne[int])(nil)
	_ Pipe[int] = (*ManyToOne[int])(nil)
	_ Pipe[int] = (*ManyToMany[int])(nil)
)
