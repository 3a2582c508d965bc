package zmtpwire

import (
	"net"
	"os"
	"syscall"
	"unsafe"
)

// A VecWriter writes buffers to a connection with writev on its
// descriptor, through syscall.RawConn, so that the runtime's poller waits
// while the socket's buffer is full and the connection's deadlines apply.
// It keeps its iovec array, so a write allocates nothing (net.Buffers
// allocates on each). One goroutine at a time uses it: the holder of the
// connection's write lock.
type VecWriter struct {
	rc   syscall.RawConn
	fn   func(fd uintptr) bool // w.do, made once
	bufs [][]byte              // what is left to write
	iov  []syscall.Iovec
	n    int
	err  error
}

// maxIov bounds the buffers of one writev (IOV_MAX is 1024 on Linux).
const maxIov = 1024

// NewVecWriter returns a VecWriter for c, or nil when c has no
// descriptor to write to (net.Pipe, say).
func NewVecWriter(c net.Conn) *VecWriter {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	w := &VecWriter{rc: rc}
	w.fn = w.do
	return w
}

// WriteBuffers writes all of bufs and returns the bytes written.
func (w *VecWriter) WriteBuffers(bufs [][]byte) (int, error) {
	w.bufs, w.n, w.err = bufs, 0, nil
	if err := w.rc.Write(w.fn); err != nil && w.err == nil {
		w.err = err
	}
	clear(w.iov[:cap(w.iov)]) // drop the pointers into the caller's bodies
	w.bufs = nil
	return w.n, w.err
}

// do is RawConn.Write's function: it writes until all is written (true),
// the socket's buffer is full (false: the poller waits, then calls again)
// or the system call fails (true, err set).
func (w *VecWriter) do(fd uintptr) bool {
	for {
		for len(w.bufs) > 0 && len(w.bufs[0]) == 0 {
			w.bufs = w.bufs[1:]
		}
		if len(w.bufs) == 0 {
			return true
		}
		w.iov = w.iov[:0]
		for _, b := range w.bufs {
			if len(b) == 0 {
				continue
			}
			v := syscall.Iovec{Base: &b[0]}
			v.SetLen(len(b))
			if w.iov = append(w.iov, v); len(w.iov) == maxIov {
				break
			}
		}
		n, _, e := syscall.Syscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&w.iov[0])), uintptr(len(w.iov)))
		switch e {
		case 0:
		case syscall.EAGAIN:
			return false
		case syscall.EINTR:
			continue
		default:
			w.err = os.NewSyscallError("writev", e)
			return true
		}
		w.n += int(n)
		for m := int(n); m > 0; {
			if k := len(w.bufs[0]); k <= m {
				m -= k
				w.bufs = w.bufs[1:]
			} else {
				w.bufs[0] = w.bufs[0][m:]
				m = 0
			}
		}
	}
}
