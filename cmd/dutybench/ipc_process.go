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
	"time"

	"golang.org/x/sys/unix"

	dutyclock "github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/mailbox"
)

// The second process of W4T and W4L is this binary re-executed with
// childRoleEnv naming its role and its parameters in DUTYBENCH_W4_*
// variables. It prints "ready" once set up, then "done <monotonic ns>"
// after its last message or "fail <error>", and exits when its stdin
// closes, so it never outlives the parent.
const childRoleEnv = "DUTYBENCH_W4_CHILD"

// runChildIfAsked runs this process as a child, and exits, when
// childRoleEnv says so. main and TestMain call it first.
func runChildIfAsked() {
	if role := os.Getenv(childRoleEnv); role != "" {
		os.Exit(childMain(role))
	}
}

// monoNow reads the host's monotonic clock, the same in every process: a
// child's end time and the parent's start time compare.
func monoNow() int64 { return dutyclock.Host.Nanos() }

// w4Base is where W4's files go: /dev/shm where it exists, else the
// temporary directory.
func w4Base() string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		return "/dev/shm"
	}
	return os.TempDir()
}

// w4Prefix names a repetition's directory, dutybench-w4-<pid>-<random>, so
// that a later run can tell one left by a dead run (sweepW4Dirs).
const w4Prefix = "dutybench-w4-"

// liveDirs are the repetition directories not yet removed, for the signal
// handler (removeLiveDirs).
var liveDirs sync.Map

// w4Dir returns a fresh directory for one repetition's files and the
// function that removes it.
func w4Dir() (string, func(), error) {
	dir, err := os.MkdirTemp(w4Base(), fmt.Sprintf("%s%d-", w4Prefix, os.Getpid()))
	if err != nil {
		return "", nil, err
	}
	liveDirs.Store(dir, true)
	return dir, func() { _ = os.RemoveAll(dir); liveDirs.Delete(dir) }, nil
}

// removeLiveDirs removes every repetition directory still present.
func removeLiveDirs() {
	liveDirs.Range(func(dir, _ any) bool { _ = os.RemoveAll(dir.(string)); liveDirs.Delete(dir); return true })
}

// sweepW4Dirs removes the repetition directories in base left by runs
// whose process no longer exists and returns how many it removed. A
// directory of a live process, or whose name has no pid, is left alone.
// Liveness is kill(pid, 0): no signal is sent.
func sweepW4Dirs(base string) int {
	entries, _ := os.ReadDir(base)
	removed := 0
	for _, e := range entries {
		pidText, _, ok := strings.Cut(strings.TrimPrefix(e.Name(), w4Prefix), "-")
		pid, err := strconv.Atoi(pidText)
		if !e.IsDir() || !strings.HasPrefix(e.Name(), w4Prefix) || !ok || err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if errors.Is(unix.Kill(pid, 0), unix.ESRCH) && os.RemoveAll(filepath.Join(base, e.Name())) == nil {
			removed++ // EPERM: alive, or not ours to judge
		}
	}
	return removed
}

// createMailbox creates dir/name, the mailbox of every W4 variant, drained
// by this process.
func createMailbox(dir, name string) (*mailbox.Mailbox, *ipc.MailboxFile, error) {
	return ipc.CreateMailbox(dir, name, mailbox.Config{Capacity: ringCapacity})
}

// openMailbox opens a mailbox another process created, with a hang guard.
func openMailbox(path string) (*mailbox.Mailbox, *ipc.MailboxFile, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return ipc.OpenMailbox(ctx, path, ipc.WithWaitForFile())
}

// openedMailbox opens the mailbox a child created at path, then calls
// begin (the timed part starts) and fn with it.
func openedMailbox(path string, begin func(), fn func(m *mailbox.Mailbox) error) error {
	m, f, err := openMailbox(path)
	if err != nil {
		return err
	}
	defer f.Close()
	begin()
	return fn(m)
}

// child is the second process of a repetition, seen from the parent.
type child struct {
	name   string // the role
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string   // stdout lines, closed at end of output
	exited chan struct{} // closed once the child is reaped
	stderr strings.Builder
	err    error // the exit error, valid once exited is closed
}

// childSpec says how to start a child: its role, its environment, and the
// files it gets as descriptors 3, 4, ...
type childSpec struct {
	role  string
	env   []string
	files []*os.File
}

func startChild(spec childSpec) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	p := &child{name: spec.role, lines: make(chan string, 4), exited: make(chan struct{}), cmd: exec.Command(exe)}
	p.cmd.Env = append(append(os.Environ(), childRoleEnv+"="+spec.role), spec.env...)
	p.cmd.ExtraFiles, p.cmd.Stderr = spec.files, &p.stderr
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := p.cmd.StdoutPipe()
	if err == nil {
		err = p.cmd.Start()
	}
	if err != nil {
		return nil, err
	}
	go func() {
		for sc := bufio.NewScanner(out); sc.Scan(); {
			p.lines <- sc.Text()
		}
		close(p.lines)
		p.err = p.cmd.Wait() // after the last read of the pipe
		close(p.exited)
	}()
	return p, nil
}

// placementEnv tells a child to place its working thread as slot's of
// place.
func placementEnv(place placement, slot int) []string {
	lock := "0"
	if place.lock {
		lock = "1"
	}
	return []string{"DUTYBENCH_W4_LOCK=" + lock, "DUTYBENCH_W4_CPU=" + strconv.Itoa(place.cpu(slot))}
}

// line returns the child's next stdout line, or an error if it exits or
// timeout passes first.
func (p *child) line(timeout time.Duration) (string, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case l, ok := <-p.lines:
		if !ok {
			<-p.exited
			return "", fmt.Errorf("dutybench: child %s exited: %v: %s", p.name, p.err, strings.TrimSpace(p.stderr.String()))
		}
		return l, nil
	case <-t.C:
		return "", fmt.Errorf("%w: no word from child %s after %v", errTimeout, p.name, timeout)
	}
}

func (p *child) ready(timeout time.Duration) error {
	l, err := p.line(timeout)
	if err == nil && l != "ready" {
		err = p.failure(l)
	}
	return err
}

// result waits for "done <end ns>" or "fail <error>"; a payload mismatch
// in the child wraps errPayload, as in the parent.
func (p *child) result(timeout time.Duration) (int64, error) {
	l, err := p.line(timeout)
	if err != nil {
		return 0, err
	}
	rest, ok := strings.CutPrefix(l, "done ")
	if !ok {
		return 0, p.failure(l)
	}
	end, err := strconv.ParseInt(rest, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("dutybench: child %s: %q: %w", p.name, l, err)
	}
	return end, nil
}

func (p *child) failure(l string) error {
	msg, _ := strings.CutPrefix(l, "fail ")
	if what, ok := strings.CutPrefix(msg, errPayload.Error()+": "); ok {
		return fmt.Errorf("%w: child %s: %s", errPayload, p.name, what)
	}
	return fmt.Errorf("dutybench: child %s: %s", p.name, msg)
}

// stop closes the child's stdin (it exits on EOF), kills it (this
// process's own child, by its pid) if it has not exited within a second,
// and returns once it is reaped.
func (p *child) stop() {
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

// withChildren runs one repetition across processes: it starts a child per
// spec, waits until each is ready, then runs work in slot 0 of a team
// (placed as place says) that aborts when a child exits early. work calls
// begin where its timed part starts. The figure runs from begin to the
// latest child's end when childEnd, else to work's return.
func withChildren(cfg *runConfig, place placement, childEnd bool, specs []childSpec, work func(t *team, begin func()) error) (time.Duration, error) {
	var children []*child
	defer func() {
		for _, c := range children {
			c.stop()
		}
	}()
	for _, spec := range specs {
		c, err := startChild(spec)
		for _, f := range spec.files {
			_ = f.Close() // the child has its copy
		}
		if err != nil {
			return 0, err
		}
		children = append(children, c)
	}
	for _, c := range children {
		if err := c.ready(time.Minute); err != nil {
			return 0, err
		}
	}
	t := newTeam(place)
	stopWatch := make(chan struct{})
	var watchers sync.WaitGroup
	for _, c := range children {
		watchers.Go(func() {
			select {
			case <-c.exited:
				t.abort.Store(true) // a producer spinning on a full ring gives up
			case <-stopWatch:
			}
		})
	}
	var start int64
	t.spawn(0, func() error {
		err := work(t, func() { start = monoNow() })
		t.finish()
		return err
	})
	elapsed, perr := t.run(cfg.timeout)
	close(stopWatch)
	watchers.Wait()
	wait := cfg.timeout
	if perr != nil {
		wait = time.Second // this side failed: the children have only a moment
	}
	var end int64
	var cerrs []error
	for _, c := range children {
		e, err := c.result(wait)
		end, cerrs = max(end, e), append(cerrs, err)
	}
	cerr := errors.Join(cerrs...)
	if perr != nil && errors.Is(cerr, errTimeout) {
		cerr = nil // the children only waited for a parent that failed
	}
	if err := errors.Join(perr, cerr); err != nil {
		return 0, err
	}
	if childEnd {
		return time.Duration(end - start), nil
	}
	return elapsed, nil
}

// childRoles set up a child from what the parent gave it and return serve,
// which handles the first k of the parent's n messages, checking them with
// c, and the function that releases what it set up.
var childRoles = map[string]func() (serve func(t *team, c *checker, k int) error, done func(), err error){
	"w4t-mailbox": childMailboxConsumer,
	"w4t-socket":  childSocket(false),
	"w4t-pubsub":  childSubscriber,
	"w4l-mailbox": childMailboxPonger,
	"w4l-socket":  childSocket(true),
}

// childMain runs role in the child and returns its exit status.
// DUTYBENCH_W4_EXIT_AFTER (tests) makes it exit abruptly after that many
// messages: a consumer that dies mid-run.
func childMain(role string) int {
	go func() { // the parent holds our stdin: EOF means it is gone
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(3)
	}()
	if err := childRun(role); err != nil {
		fmt.Printf("fail %s\n", strings.ReplaceAll(err.Error(), "\n", "; "))
		return 1
	}
	return 0
}

func childRun(role string) error {
	setup, ok := childRoles[role]
	if !ok {
		return fmt.Errorf("unknown role %q", role)
	}
	if os.Getenv("DUTYBENCH_W4_LOCK") == "1" {
		runtime.LockOSThread()
		if cpu, err := strconv.Atoi(os.Getenv("DUTYBENCH_W4_CPU")); err == nil && cpu >= 0 {
			if err := pinTo(cpu); err != nil {
				return err
			}
		}
	}
	n, err := strconv.Atoi(os.Getenv("DUTYBENCH_W4_N"))
	if err != nil {
		return fmt.Errorf("DUTYBENCH_W4_N: %w", err)
	}
	serve, done, err := setup()
	if err != nil {
		return err
	}
	defer done()
	k := n
	if e, err := strconv.Atoi(os.Getenv("DUTYBENCH_W4_EXIT_AFTER")); err == nil && e > 0 && e < n {
		k = e
	}
	c := newChecker(1)
	fmt.Println("ready")
	if err := serve(newTeam(placement{}), c, k); err != nil {
		return err
	}
	end := monoNow()
	if k < n {
		os.Exit(4)
	}
	if err := c.finish([]int{n}); err != nil {
		return err
	}
	fmt.Printf("done %d\n", end)
	return nil
}

// socketPair returns a connected stream socket pair: this process's end as
// a net.Conn, the child's as a file for ExtraFiles.
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
