package childtest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Hang guards: how long a test waits for a child's line, or its exit.
const (
	LineTimeout = 60 * time.Second
	WaitTimeout = 120 * time.Second
)

// Run runs the role that the environment variable env names, with the
// function roles gives it, and ends the process; it returns when env is
// not set (the binary runs as the test binary). An unknown role fails.
func Run(env string, roles map[string]func() error) {
	role := os.Getenv(env)
	if role == "" {
		return
	}
	fn, ok := roles[role]
	if !ok {
		fmt.Fprintf(os.Stderr, "child: unknown role %q\n", role)
		os.Exit(1)
	}
	if err := fn(); err != nil {
		fmt.Fprintln(os.Stderr, "child", role, "failed:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// A Proc is a child process of a test.
type Proc struct {
	Cmd    *exec.Cmd
	Stdin  io.WriteCloser
	Stdout *bufio.Reader
	Stderr *strings.Builder
}

// Command prepares the executable exe (this test binary when empty) to
// run role, named in the environment variable env, with vars
// ("NAME=value") added to this process's environment; it runs no tests.
// Start starts it.
func Command(t testing.TB, exe, env, role string, vars ...string) *Proc {
	t.Helper()
	if exe == "" {
		var err error
		exe, err = os.Executable()
		require.NoError(t, err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(append(os.Environ(), env+"="+role), vars...)
	p := &Proc{Cmd: cmd, Stderr: &strings.Builder{}}
	cmd.Stderr = p.Stderr
	var err error
	p.Stdin, err = cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	p.Stdout = bufio.NewReader(out)
	return p
}

// Start starts the child; if it still runs when the test ends, it is
// killed and reaped then.
func (p *Proc) Start(t testing.TB) *Proc {
	t.Helper()
	require.NoError(t, p.Cmd.Start())
	t.Cleanup(func() {
		if p.Cmd.ProcessState == nil {
			_ = p.Cmd.Process.Kill()
			_ = p.Cmd.Wait()
		}
	})
	return p
}

// Start is Command with this test binary, then Proc.Start.
func Start(t testing.TB, env, role string, vars ...string) *Proc {
	t.Helper()
	return Command(t, "", env, role, vars...).Start(t)
}

// Line returns the child's next stdout line, trimmed; it fails the test
// (killing the child) when the output ends or no line comes within
// LineTimeout.
func (p *Proc) Line(t testing.TB) string {
	t.Helper()
	type result struct {
		s   string
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := p.Stdout.ReadString('\n')
		ch <- result{strings.TrimSpace(s), err}
	}()
	select {
	case r := <-ch:
		require.NoError(t, r.err, "child stderr: %s", p.Stderr)
		return r.s
	case <-time.After(LineTimeout):
		_ = p.Cmd.Process.Kill()
		<-ch
		t.Fatalf("no line from child %v; stderr: %s", p.Cmd.Args, p.Stderr)
		return ""
	}
}

// Next returns the child's next stdout line, trimmed, or "" once its
// output has ended: for a child that is killed while it writes.
func (p *Proc) Next() string {
	s, _ := p.Stdout.ReadString('\n')
	return strings.TrimSpace(s)
}

// LineAsync reads the child's next stdout line in the background: the
// channel gets it, or "" at the end of the output.
func (p *Proc) LineAsync() <-chan string {
	ch := make(chan string, 1)
	go func() { ch <- p.Next() }()
	return ch
}

// Wait reaps the child and returns its exit error; it fails the test
// (killing the child) when the child has not exited within WaitTimeout.
func (p *Proc) Wait(t testing.TB) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.Cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(WaitTimeout):
		_ = p.Cmd.Process.Kill()
		<-done
		t.Fatalf("child %v did not exit; stderr: %s", p.Cmd.Args, p.Stderr)
		return nil
	}
}

// Kill sends SIGKILL to the child (the test's own) and reaps it.
func (p *Proc) Kill(t testing.TB) {
	t.Helper()
	require.NoError(t, p.Cmd.Process.Kill())
	_ = p.Wait(t)
}
