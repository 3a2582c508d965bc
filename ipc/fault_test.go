package ipc

import (
	"errors"
	"os"
	"os/exec"
	"runtime/debug"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/ringbuf"
)

// TestGuardTruncatedFile truncates a file under two live mappings (the
// owner's and a reader's) and checks what each operation does: guarded
// accesses return a *FaultError matching ErrFault and ErrTruncated, cheap
// checks report ErrTruncated before touching memory, and nothing crashes.
func TestGuardTruncatedFile(t *testing.T) {
	dir := testDir(t)
	r, err := CreateRing(dir, "trunc", 64<<10)
	require.NoError(t, err)
	o, err := OpenRing(ctxT(t), r.File.Path())
	require.NoError(t, err)
	require.NoError(t, r.Write(testTypeID, []byte("before")))
	f := o.File

	// The whole file shrinks to nothing: header and ring pages are gone.
	require.NoError(t, os.Truncate(f.Path(), 0))

	require.ErrorIs(t, f.checkSize(), ErrTruncated)
	require.ErrorIs(t, r.File.Heartbeat(1), ErrTruncated, "fstat check first")

	s, err := f.Section(0)
	require.NoError(t, err, "the accessor checks the reference, not the size")
	err = f.Guard(func() error {
		touch(s, 100) // a plain load from a vanished page
		return nil
	})
	var fe *faultError
	require.ErrorAs(t, err, &fe)
	require.ErrorIs(t, err, ErrFault)
	require.ErrorIs(t, err, ErrTruncated)
	require.True(t, fe.Truncated)
	require.Zero(t, fe.Size)
	require.Equal(t, f.Len(), fe.Mapped)
	require.Equal(t, uintptr(unsafe.Pointer(&s[100]))&^4095, fe.Addr&^4095, "the faulting page")

	// A ring read, with its deferred head release, under the guard.
	err = f.Guard(func() error {
		_, err := o.Read(func(int32, []byte) {}, ringbuf.NoLimit)
		return err
	})
	require.ErrorIs(t, err, ErrTruncated)
	// A write, with copy (runtime memmove) into the vanished page.
	err = f.Guard(func() error { return o.Write(testTypeID, make([]byte, 100)) })
	require.ErrorIs(t, err, ErrTruncated)
	// Atomic header words.
	_, err = f.heartbeatMillis()
	require.ErrorIs(t, err, ErrTruncated)
	_, err = f.Liveness(nowT(), 0)
	require.ErrorIs(t, err, ErrTruncated)

	// A function's own error passes through; the setting is restored.
	sentinel := errors.New("mine")
	require.Equal(t, sentinel, f.Guard(func() error { return sentinel }))
	require.False(t, debug.SetPanicOnFault(false), "Guard restored the previous setting")

	// Closing still releases everything; the owner's closed mark faults
	// and is reported.
	require.NoError(t, o.Close())
	require.ErrorIs(t, r.Close(), ErrTruncated)
	require.Zero(t, r.File.refCount())
	require.False(t, mapped(t, r.File))

	// Open refuses the truncated file at once.
	_, err = open(shortCtx(t), r.File.Path())
	require.ErrorIs(t, err, ErrNotReady) // 0 bytes: indistinguishable from a file being created
}

// TestGuardPartialTruncation: the header survives, the ring's tail pages
// do not. Header-only operations work; guarded ring access near the end
// fails; Open reports ErrTruncated.
func TestGuardPartialTruncation(t *testing.T) {
	dir := testDir(t)
	r, err := CreateRing(dir, "partial", 64<<10)
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, os.Truncate(r.File.Path(), 8192))
	_, err = r.File.heartbeatMillis()
	require.NoError(t, err, "the header page is still backed")
	err = r.File.Guard(func() error { _ = r.ProducerPosition(); return nil }) // trailer: past 8192
	require.ErrorIs(t, err, ErrTruncated)
	_, err = OpenRing(ctxT(t), r.File.Path())
	require.ErrorIs(t, err, ErrTruncated)
}

func TestGuardNonFaultPanics(t *testing.T) {
	require.PanicsWithValue(t, "boom", func() { _ = guardAny(func() error { panic("boom") }) })
	require.Panics(t, func() {
		_ = guardAny(func() error {
			var p *int
			sink = byte(*p) // nil dereference: a bug, not a mapping fault
			return nil
		})
	})
	require.NoError(t, guardAny(func() error { return nil }))
	require.False(t, debug.SetPanicOnFault(false))

	// File.Guard re-panics for a fault outside its mapping.
	dir := testDir(t)
	a, err := CreateRing(dir, "a", 1024)
	require.NoError(t, err)
	defer a.Close()
	b, err := CreateRing(dir, "b", 1024)
	require.NoError(t, err)
	bs, err := b.File.Section(0)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(b.File.Path(), 0))
	require.Panics(t, func() { _ = a.File.Guard(func() error { touch(bs, 0); return nil }) })
	require.ErrorIs(t, guardAny(func() error { touch(bs, 0); return nil }), ErrFault, "the package-level Guard takes any address")
	require.Error(t, b.Close())
}

// TestUnguardedFaultKillsProcess documents what happens on a hot path
// without a guard: a child truncates its ring's file and reads the ring;
// Go turns the SIGBUS into a fatal "unexpected fault address" error and
// the process exits with status 2. The parent is unaffected.
func TestUnguardedFaultKillsProcess(t *testing.T) {
	dir := testDir(t)
	r, err := CreateRing(dir, "sigbus", 64<<10)
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, r.Write(testTypeID, []byte("x")))
	p := startChild(t, "", "sigbus", pathEnv(r.File.Path())).Start(t)
	err = p.Wait(t)
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stderr: %s", p.Stderr)
	require.Equal(t, 2, ee.ExitCode(), "stderr: %s", p.Stderr)
	require.Contains(t, p.Stderr.String(), "unexpected fault address")
	require.Contains(t, p.Stderr.String(), "fatal error: fault")
	require.Contains(t, p.Stderr.String(), "SIGBUS")
	ws := ee.Sys().(syscall.WaitStatus)
	require.False(t, ws.Signaled(), "Go exits with 2; it does not re-raise SIGBUS")
	require.ErrorIs(t, r.File.checkSize(), ErrTruncated, "the parent detects it cheaply")
}

func nowT() time.Time { return time.Now() }

var sink byte

// touch loads b[i] for real (the compiler cannot drop it).
//
//go:noinline
func touch(b []byte, i int) { sink = b[i] }
