package publication

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// Cross-process tests re-execute the test binary. TestMain runs a child
// role instead of the tests when childEnv is set; the role's parameters
// come in further DUTY_IPC_* variables and its results go to stdout, one
// line per event.
const childEnv = "DUTY_PUBLICATION_CHILD"

func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		os.Exit(runChild(role))
	}
	goleak.VerifyTestMain(m)
}

func runChild(role string) int {
	var err error
	switch role {
	case "sub":
		err = childSubscriber()
	case "sub-hang":
		err = childSubscriberHang()
	case "pub-claimer":
		err = childPublisherClaimer()
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "child", role, "failed:", err)
		return 1
	}
	return 0
}

func envInt(name string) int {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil {
		panic(fmt.Sprintf("%s: %v", name, err))
	}
	return n
}

func backoff(spins int) {
	if spins < 100 {
		runtime.Gosched()
	} else {
		time.Sleep(50 * time.Microsecond)
	}
}

// testDir returns a fresh directory on /dev/shm (where it exists: the file
// system duty files normally live on), removed after the test.
func testDir(t testing.TB) string {
	t.Helper()
	base := os.TempDir()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		base = "/dev/shm"
	}
	dir, err := os.MkdirTemp(base, "duty-publication-test-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// proc is a child process of this test.
type proc struct {
	cmd    *exec.Cmd
	stdout *bufio.Reader
	stderr *strings.Builder
}

// startChild starts the test binary in role with env added, and returns
// it running. The child is killed and reaped at the end of the test if it
// is still running: only processes this test started are ever signalled.
func startChild(t *testing.T, role string, env ...string) *proc {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childEnv+"="+role), env...)
	p := &proc{cmd: cmd, stderr: &strings.Builder{}}
	cmd.Stderr = p.stderr
	var out io.ReadCloser
	out, err = cmd.StdoutPipe()
	require.NoError(t, err)
	p.stdout = bufio.NewReader(out)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return p
}

// line reads the child's next stdout line, failing the test (instead of
// hanging) if none comes within a generous time.
func (p *proc) line(t *testing.T) string {
	t.Helper()
	type result struct {
		s   string
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := p.stdout.ReadString('\n')
		ch <- result{strings.TrimSpace(s), err}
	}()
	select {
	case r := <-ch:
		require.NoError(t, r.err, "child stderr: %s", p.stderr)
		return r.s
	case <-time.After(60 * time.Second):
		_ = p.cmd.Process.Kill()
		<-ch
		t.Fatalf("no line from child %v; stderr: %s", p.cmd.Args, p.stderr)
		return ""
	}
}

// wait reaps the child and returns its exit error.
func (p *proc) wait(t *testing.T) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(120 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
		t.Fatalf("child %v did not exit; stderr: %s", p.cmd.Args, p.stderr)
		return nil
	}
}

// kill sends SIGKILL to this test's own child and reaps it.
func (p *proc) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Kill())
	_ = p.wait(t)
}

func pathEnv(path string) string { return "DUTY_IPC_PATH=" + path }

func dirNameEnv(dir, name string) []string {
	return []string{"DUTY_IPC_DIR=" + dir, "DUTY_IPC_NAME=" + name}
}

// ctxT returns a context bounded by a generous hang guard.
func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
