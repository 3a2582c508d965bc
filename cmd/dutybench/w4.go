package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	dutyclock "github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/mailbox"
)

// W4T and W4L (docs/workloads.md, "W4T and W4L: across processes"): W1
// and W3 with the ring in a shared file (a mailbox in a file,
// ipc.CreateMailbox: its ring lives in /dev/shm) and the consumer (ponger)
// in a second process: the dutybench binary re-executed
// with w4ChildEnv naming its role. Baselines: the same workload over a Unix
// domain socket pair between the two processes (net.Conn over a
// socketpair, what a Go program would use; bufio for throughput), and the
// same shared-file mailbox with the consumer in a goroutine of this
// process (inprocess).
//
// The publication-2sub variant (one IPC publication, two subscriber
// processes) is appended to w4t.variants by w4pub.go.
var (
	w4t = &workload{
		name:        "w4t",
		kind:        kindThroughput,
		defaultN:    20_000_000,
		defaultReps: 10,
		variants: []variant{
			{name: "unixsocket", run: w4tSocket, goroutines: true},
			{name: "inprocess", run: w4tInProcess},
			{name: "crossprocess", run: w4tCrossProcess},
		},
	}
	w4l = &workload{
		name:        "w4l",
		kind:        kindLatency,
		defaultN:    1_000_000,
		defaultReps: 7,
		variants: []variant{
			{name: "unixsocket", run: w4lSocket, goroutines: true},
			{name: "inprocess", run: w4lInProcess},
			{name: "crossprocess", run: w4lCrossProcess},
		},
	}
)

// w4ChildEnv names the role of a re-executed dutybench (or test binary);
// the role's parameters come in further DUTYBENCH_W4_* variables.
const w4ChildEnv = "DUTYBENCH_W4_CHILD"

func init() {
	registry = append(registry, w4t, w4l)
	if role := os.Getenv(w4ChildEnv); role != "" {
		os.Exit(w4Child(role))
	}
}

// monoNow reads the host's monotonic clock, which is the same clock in
// every process of the machine: a child's end time and the parent's start
// time compare.
func monoNow() int64 { return dutyclock.Host.Nanos() }

// w4Base is where W4's files go: /dev/shm where it exists (where duty's
// files normally live), else the temporary directory.
func w4Base() string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		return "/dev/shm"
	}
	return os.TempDir()
}

// w4Prefix names a repetition's directory: dutybench-w4-<pid>-<random>, so
// that a later run can tell a directory left by a dead run (sweepW4Dirs).
const w4Prefix = "dutybench-w4-"

// liveDirs are the repetition directories not yet removed, for the signal
// handler (removeLiveDirs).
var liveDirs struct {
	sync.Mutex
	m map[string]bool
}

// w4Dir returns a fresh directory for one repetition's files and the
// function that removes it.
func w4Dir() (string, func(), error) {
	dir, err := os.MkdirTemp(w4Base(), fmt.Sprintf("%s%d-", w4Prefix, os.Getpid()))
	if err != nil {
		return "", nil, err
	}
	liveDirs.Lock()
	if liveDirs.m == nil {
		liveDirs.m = map[string]bool{}
	}
	liveDirs.m[dir] = true
	liveDirs.Unlock()
	return dir, func() {
		_ = os.RemoveAll(dir)
		liveDirs.Lock()
		delete(liveDirs.m, dir)
		liveDirs.Unlock()
	}, nil
}

// removeLiveDirs removes every repetition directory still present: called
// when the run is interrupted by a signal.
func removeLiveDirs() {
	liveDirs.Lock()
	defer liveDirs.Unlock()
	for dir := range liveDirs.m {
		_ = os.RemoveAll(dir)
		delete(liveDirs.m, dir)
	}
}

// sweepW4Dirs removes the repetition directories in base left by dutybench
// runs whose process no longer exists (killed with SIGKILL, say), and
// returns how many it removed. A directory of a live process, or whose name
// has no pid, is left alone. Liveness is kill(pid, 0): no signal is sent.
func sweepW4Dirs(base string) int {
	entries, err := os.ReadDir(base)
	if err != nil {
		return 0
	}
	removed := 0
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, w4Prefix) {
			continue
		}
		pidText, _, ok := strings.Cut(strings.TrimPrefix(name, w4Prefix), "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := unix.Kill(pid, 0); !errors.Is(err, unix.ESRCH) {
			continue // alive, or not ours to judge (EPERM)
		}
		if os.RemoveAll(filepath.Join(base, name)) == nil {
			removed++
		}
	}
	return removed
}

// createMailbox creates dir/name, the mailbox of every W4 variant: the
// standard 64 KiB ring, drained by this process.
func createMailbox(dir, name string) (*mailbox.Mailbox, *ipc.MailboxFile, error) {
	return ipc.CreateMailbox(dir, name, mailbox.Config{Capacity: ringCapacity})
}

// w4proc is the second process of a repetition.
type w4proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string   // stdout lines, closed at end of output
	exited chan struct{} // closed once the child is reaped
	stderr strings.Builder
	err    error // the child's exit error, valid once exited is closed
	gone   atomic.Bool
}

// startW4Child starts this binary in role, with env added and extra files
// as descriptors 3, 4, ... The child exits when its stdin closes (the
// parent ended), so it never outlives the parent.
func startW4Child(role string, env []string, extra ...*os.File) (*w4proc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	p := &w4proc{lines: make(chan string, 4), exited: make(chan struct{})}
	p.cmd = exec.Command(exe)
	p.cmd.Env = append(append(os.Environ(), w4ChildEnv+"="+role), env...)
	p.cmd.ExtraFiles = extra
	p.cmd.Stderr = &p.stderr
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		p.err = p.cmd.Wait() // after the last read of the pipe
		p.gone.Store(true)
		close(p.exited)
	}()
	return p, nil
}

// childEnv returns the placement of the child's working thread: locked and
// pinned to slot's CPU as the parent's goroutines are.
func childEnv(place placement, slot int) []string {
	lock := "0"
	if place.lock {
		lock = "1"
	}
	return []string{"DUTYBENCH_W4_LOCK=" + lock, "DUTYBENCH_W4_CPU=" + strconv.Itoa(place.cpu(slot))}
}

// line returns the child's next stdout line, or an error if it exits or
// timeout passes first.
func (p *w4proc) line(timeout time.Duration) (string, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case l, ok := <-p.lines:
		if !ok {
			<-p.exited
			return "", fmt.Errorf("dutybench: child %s exited: %v: %s", p.role(), p.err, strings.TrimSpace(p.stderrText()))
		}
		return l, nil
	case <-t.C:
		return "", fmt.Errorf("%w: no word from child %s after %v", errTimeout, p.role(), timeout)
	}
}

func (p *w4proc) role() string {
	for _, e := range p.cmd.Env {
		if r, ok := strings.CutPrefix(e, w4ChildEnv+"="); ok {
			return r
		}
	}
	return "?"
}

// stderrText is the child's stderr; read it only once the child exited.
func (p *w4proc) stderrText() string {
	select {
	case <-p.exited:
		return p.stderr.String()
	default:
		return ""
	}
}

// ready waits for the child's "ready" line.
func (p *w4proc) ready(timeout time.Duration) error {
	l, err := p.line(timeout)
	if err != nil {
		return err
	}
	if l != "ready" {
		return p.failure(l)
	}
	return nil
}

// result waits for the child's last line: "done <end ns>" or
// "fail <error>". A payload mismatch in the child is an error wrapping
// errPayload, as in the parent.
func (p *w4proc) result(timeout time.Duration) (int64, error) {
	l, err := p.line(timeout)
	if err != nil {
		return 0, err
	}
	if rest, ok := strings.CutPrefix(l, "done "); ok {
		end, err := strconv.ParseInt(rest, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("dutybench: child %s: %q: %w", p.role(), l, err)
		}
		return end, nil
	}
	return 0, p.failure(l)
}

func (p *w4proc) failure(l string) error {
	msg, _ := strings.CutPrefix(l, "fail ")
	if what, ok := strings.CutPrefix(msg, errPayload.Error()+": "); ok {
		return fmt.Errorf("%w: child %s: %s", errPayload, p.role(), what)
	}
	return fmt.Errorf("dutybench: child %s: %s", p.role(), msg)
}

// stop ends the child: it closes its stdin (the child exits on EOF) and
// kills it (this process's own child, by its pid) if it has not exited
// within a second; it returns once the child is reaped.
func (p *w4proc) stop() {
	_ = p.stdin.Close()
	select {
	case <-p.exited:
		return
	case <-time.After(time.Second):
	}
	_ = p.cmd.Process.Kill()
	for range p.lines { // let the reader reach EOF and reap
	}
	<-p.exited
}

// w4Child runs role in the child process and returns its exit status.
func w4Child(role string) int {
	go func() { // the parent holds our stdin: EOF means it is gone
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(3)
	}()
	if err := w4Enter(); err != nil {
		fmt.Printf("fail %v\n", err)
		return 1
	}
	var err error
	switch role {
	case "w4t-mailbox":
		err = w4tChildMailbox()
	case "w4t-socket":
		err = w4tChildSocket()
	case "w4l-mailbox":
		err = w4lChildMailbox()
	case "w4l-socket":
		err = w4lChildSocket()
	case "w4t-pubsub":
		err = w4tChildPubSub()
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	if err != nil {
		fmt.Printf("fail %s\n", strings.ReplaceAll(err.Error(), "\n", "; "))
		return 1
	}
	return 0
}

// w4Enter applies the placement the parent passed to the child's main
// goroutine, which does the child's work.
func w4Enter() error {
	if os.Getenv("DUTYBENCH_W4_LOCK") != "1" {
		return nil
	}
	runtime.LockOSThread()
	cpu, err := strconv.Atoi(os.Getenv("DUTYBENCH_W4_CPU"))
	if err != nil || cpu < 0 {
		return nil
	}
	return pinTo(cpu)
}

// childCount returns how many messages a child handles: n, or, when the
// tests set DUTYBENCH_W4_EXIT_AFTER, that many, after which the child
// exits abruptly (exitEarly) to play a consumer that dies mid-run.
func childCount(n int) int {
	if k, err := strconv.Atoi(os.Getenv("DUTYBENCH_W4_EXIT_AFTER")); err == nil && k > 0 && k < n {
		return k
	}
	return n
}

// exitEarly ends a child that played a dying consumer (see childCount).
func exitEarly(handled, n int) {
	if handled < n {
		os.Exit(4)
	}
}

func envN(name string) (int, error) {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return n, nil
}

// openMailbox opens a mailbox another process created, with a hang guard.
func openMailbox(path string) (*mailbox.Mailbox, *ipc.MailboxFile, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return ipc.OpenMailbox(ctx, path, ipc.WithWaitForFile())
}

// sendSpin sends p to m, spinning while the mailbox is full; it gives up
// when abort is set (checked only when refused). ErrConsumerDead and every
// other error end the repetition.
func sendSpin(m *mailbox.Mailbox, p []byte, abort *atomic.Bool) error {
	for {
		err := m.Send(msgTypeID, p)
		if err == nil {
			return nil
		}
		if err != mailbox.ErrBackPressured {
			return err
		}
		if abort.Load() {
			return errAborted
		}
	}
}

// socketPair returns a connected SOCK_STREAM pair: this process's end as a
// net.Conn and the child's as a file to pass in ExtraFiles.
func socketPair() (net.Conn, *os.File, error) {
	fds, err := socketpairCloexec()
	if err != nil {
		return nil, nil, fmt.Errorf("dutybench: socketpair: %w", err)
	}
	mine := os.NewFile(uintptr(fds[0]), "w4-parent")
	defer mine.Close() // FileConn dups it
	conn, err := net.FileConn(mine)
	if err != nil {
		_ = unix.Close(fds[1])
		return nil, nil, err
	}
	return conn, os.NewFile(uintptr(fds[1]), "w4-child"), nil
}

// childConn is the child's end of the socket pair (descriptor 3).
func childConn() (net.Conn, error) {
	f := os.NewFile(3, "w4-socket")
	defer f.Close()
	return net.FileConn(f)
}

// joinChild combines the parent's error with the child's outcome.
func joinChild(parent error, child error) error {
	if parent != nil && child != nil && errors.Is(child, errTimeout) {
		return parent // the child only waited for a parent that failed
	}
	return errors.Join(parent, child)
}
