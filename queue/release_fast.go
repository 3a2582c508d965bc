//go:build !duty_queue_seqcst

package queue

import (
	"sync/atomic"

	"github.com/dutyrt/duty/internal/atomicbuf"
)

// storeRelease publishes v with (at least) release order: everything the
// caller wrote before (an element, a zeroed slot) is visible to a goroutine
// that loads v. On amd64 without -race it is atomicbuf's plain MOV, which
// queue_timing_test.go measured against sync/atomic's XCHG (docs/queue.md);
// build with -tags duty_queue_seqcst to use atomic.Int64.Store everywhere
// and repeat that comparison. Every word it stores is read by its readers
// through the word itself (no Dekker-style handshake relies on it).
func storeRelease(p *atomic.Int64, v int64) { atomicbuf.StoreRelease64(p, v) }
