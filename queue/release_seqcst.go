//go:build duty_queue_seqcst

package queue

import "sync/atomic"

// storeRelease is atomic.Int64.Store under the duty_queue_seqcst tag: the
// baseline against which the release fast path is measured.
func storeRelease(p *atomic.Int64, v int64) { p.Store(v) }
