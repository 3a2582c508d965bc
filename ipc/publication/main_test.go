package publication

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dutyrt/duty/internal/childtest"
)

// Cross-process tests re-execute the test binary. TestMain runs a child
// role instead of the tests when childEnv is set; the role's parameters
// come in further DUTY_IPC_* variables and its results go to stdout, one
// line per event.
const childEnv = "DUTY_PUBLICATION_CHILD"

func TestMain(m *testing.M) {
	childtest.Run(childEnv, map[string]func() error{
		"sub":         childSubscriber,
		"sub-hang":    childSubscriberHang,
		"pub-claimer": childPublisherClaimer,
		"pub-hold":    childPublisherHold,
		"sub-rejoin":  childSubscriberRejoin,
	})
	goleak.VerifyTestMain(m)
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
type proc = childtest.Proc

// startChild starts the test binary in role with env added
// (childtest.Start).
func startChild(t *testing.T, role string, env ...string) *proc {
	t.Helper()
	return childtest.Start(t, childEnv, role, env...)
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
