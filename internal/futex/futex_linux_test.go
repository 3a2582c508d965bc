package futex

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The kernel takes the words as this package lays them out: a wait on
// unchanged words ends by its timeout, one on a changed word at once.
func TestWaitvLayoutIsTheKernels(t *testing.T) {
	var a, b atomic.Uint32
	a.Store(1)
	b.Store(1)
	words := []*atomic.Uint32{&a, &b}
	require.Equal(t, unix.ETIMEDOUT, waitv(words, []uint32{1, 1}, time.Millisecond))
	require.Equal(t, unix.EAGAIN, waitv(words, []uint32{1, 2}, time.Hour))
}
