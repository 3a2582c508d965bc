// Package atomicbuf is an atomic view of a byte slice: aligned 32- and 64-bit
// loads, stores, compare-and-swap and add at a byte index.
//
// It is the single place where duty turns offsets inside a []byte (plain heap
// memory or an mmap'd file shared with other processes) into atomic words.
//
// Two families of accessors exist:
//
//   - Checked accessors (LoadInt64, StoreInt64, ...) validate the index against
//     the buffer length and the word's alignment and return ErrOutOfBounds or
//     ErrMisaligned instead of panicking. Use them for indices that come from
//     outside (a file header, a fuzzer, a caller).
//   - Pointer accessors (Int64At, Int32At) are for hot paths whose indices are
//     proven in range by construction (a masked ring index, a trailer offset
//     validated once by the constructor). They perform no check unless the
//     package is built with the duty_invariants tag, in which case they panic
//     on a bad index so tests catch the broken invariant.
//
// Memory ordering: every operation here is a sync/atomic operation and
// therefore sequentially consistent: a store happens before any load that
// observes it. The one exception is StoreRelease, which on amd64 (without
// -race) is a plain MOV: a release store under the x86-TSO model, enough to
// publish bytes written before it to a reader that observes the stored value
// with an atomic load. See docs/memory-ordering.md, "The rules".
package atomicbuf
