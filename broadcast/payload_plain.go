//go:build amd64 && !race

package broadcast

// The payload is a plain copy on amd64 without the race detector. That is
// the seqlock Agrona uses, and it is sound here because:
//   - x86-TSO never reorders a store with an earlier store, nor a load with
//     an earlier load, so a receiver that sees a payload byte written after
//     the tail-intent store also sees that store when it loads the intent
//     after reading the bytes;
//   - the Go compiler does not move plain memory operations across an atomic
//     operation or a call: copy is a runtime call, and sync/atomic loads and
//     stores are ordered memory operations in its SSA.
//
// Under the Go memory model these plain reads racing with plain writes are a
// data race by definition; payload_atomic.go replaces them with word-wise
// atomics under -race and on weakly ordered architectures.

// atomicPayload reports whether payload bytes are copied word by word with
// sync/atomic (payload_atomic.go) or with a plain copy (this file).
const atomicPayload = false

// writePayload copies p into the ring at offset off (8-aligned, inside the
// record's aligned slot).
func writePayload(v *view, off int64, p []byte) {
	copy(v.ring[off:], p)
}

// readPayload copies len(dst) bytes from the ring at offset off into dst.
func readPayload(dst []byte, v *view, off int64) {
	copy(dst, v.ring[off:])
}
