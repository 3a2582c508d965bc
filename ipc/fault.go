package ipc

import "runtime/debug"

// guardAny runs fn on the calling goroutine with debug.SetPanicOnFault(true),
// so that a memory fault at a non-nil address (SIGBUS on a page of a
// truncated mapped file, SIGSEGV on an unmapped page) is returned as an
// error matching ErrFault. fn's own error is returned as is; any
// other panic, a nil dereference included, propagates. The previous
// setting is restored. Only faults on the calling goroutine are caught, and
// not those inside the runtime or where Go cannot unwind the stack. It is
// for cold paths that touch memory another process could truncate
// (inspection, validation, heartbeats): it costs a deferred call, so ring
// hot paths go without (see the package documentation). Prefer File.guardAny,
// which also reports whether the file was truncated.
func guardAny(fn func() error) error {
	return guard(fn, func(addr uintptr) (*faultError, bool) {
		return &faultError{Addr: addr, Size: -1, Mapped: -1}, true
	})
}

// faultAddr is implemented by the runtime.Error a fault panics with under
// SetPanicOnFault.
type faultAddr interface{ Addr() uintptr }

// guard runs fn with faults recovered; classify turns a fault's address into
// an error, or refuses it (false), in which case the panic continues.
func guard(fn func() error, classify func(addr uintptr) (*faultError, bool)) (err error) {
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
