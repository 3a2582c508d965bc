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
// observes it. The exceptions are the release and ordered stores
// (StoreRelease64, StoreOrdered64 and their variants), which on amd64
// (without -race) are plain MOVs: release stores under the x86-TSO model,
// enough to publish bytes written before them to a reader that observes
// the stored value with an atomic load. See docs/memory-ordering.md, "The
// rules".
//
// # Release stores
//
// On amd64 without -race a release store is a plain MOV in a function the
// compiler may not inline: x86-TSO gives stores release order, and the
// call is an opaque compiler barrier, so Go cannot move earlier stores
// past it (release_amd64.go; a test checks the machine code). Everywhere
// else it is sync/atomic's Store, which is sequentially consistent (on
// amd64, an XCHG that drains the store buffer).
//
// # Ordered stores
//
// On amd64 without -race StoreOrdered64 is the release store's plain MOV:
// x86-TSO never makes a store visible before an earlier one. Everywhere
// else it is atomic.Int64.Store followed by a Load of the same word, the
// value discarded. Go's atomics are sequentially consistent, so every
// architecture orders an atomic store before a later atomic load (with a
// fence after the store, one before the load, or release and acquire
// instructions that are ordered with each other), and an atomic load
// before every later access (acquire): the store comes before everything
// after the load. On arm64 that is STLR then LDAR: a load-acquire that
// follows a store-release is ordered after it, whatever the addresses.
// Neither half suffices alone there: STLR orders only what came before it,
// and an atomic swap, which Go compiles to SWPALD where the CPU has LSE
// atomics, is LDAXR/STLXR on a CPU without them, after which later accesses
// may be observed before its store half (Linux follows that loop with DMB
// ISH for its fully ordered exchange). Where Go's atomic store is fenced
// already (ppc64, s390x, mips, riscv64, loong64) the load is redundant; it
// is kept for the one argument above, which holds on every architecture.
package atomicbuf
