package ipc

import "runtime/debug"

// Guard runs fn on the calling goroutine with debug.SetPanicOnFault(true),
// so that a memory fault at a non-nil address (SIGBUS on a page of a mapped
// file that was truncated, SIGSEGV on an unmapped page) becomes a
// recoverable panic, which Guard turns into a *FaultError (matching
// ErrFault). fn's own error is returned as is; a panic that is not a memory
// fault (including a nil dereference, which Go reports without an address)
// propagates unchanged. The previous SetPanicOnFault setting is restored.
//
// Use it on cold paths that touch shared memory another process could
// truncate: inspection tools, validation, the owner's heartbeat. It costs a
// deferred call and two runtime calls, so ring hot paths do not use it; see
// the package documentation for what happens to them instead. Prefer
// File.Guard, which also reports whether the file was truncated.
//
// Limits: only faults on the calling goroutine are caught (fn must not hand
// the work to another goroutine), and only where Go allows it: a fault
// inside the runtime's own code, or a fault while Go cannot unwind the stack,
// is still fatal.
func Guard(fn func() error) error {
	return guard(fn, func(addr uintptr) (*FaultError, bool) {
		return &FaultError{Addr: addr, Size: -1, Mapped: -1}, true
	})
}

// faultAddr is implemented by the runtime.Error a fault panics with under
// SetPanicOnFault.
type faultAddr interface{ Addr() uintptr }

// guard runs fn with faults recovered; classify turns a fault's address into
// an error, or refuses it (false), in which case the panic continues.
func guard(fn func() error, classify func(addr uintptr) (*FaultError, bool)) (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		r := recover()
		if r == nil {
			return
		}
		fa, ok := r.(faultAddr)
		if !ok {
			panic(r)
		}
		fe, ok := classify(fa.Addr())
		if !ok {
			panic(r)
		}
		err = fe
	}()
	return fn()
}
