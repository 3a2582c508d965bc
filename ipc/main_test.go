package ipc

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dutyrt/duty/internal/childtest"
	"github.com/dutyrt/duty/ringbuf"
)

// Cross-process tests re-execute the test binary. TestMain runs a child
// role instead of the tests when childEnv is set; the role's parameters come
// in further DUTY_IPC_* variables and its results go to stdout, one line per
// event.
const childEnv = "DUTY_IPC_CHILD"

func TestMain(m *testing.M) {
	childtest.Run(childEnv, map[string]func() error{
		"producer": childProducer,
		"claimer":  childClaimer,
		"creator":  childCreator,
		"opener":   childOpener,
		"owner":    childOwner,
		"sigbus":   childSigbus,
		"exit":     func() error { return nil },
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

func openChildRing() (*Ring, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return OpenRing(ctx, os.Getenv("DUTY_IPC_PATH"))
}

// childProducer sends DUTY_IPC_COUNT messages from sender DUTY_IPC_SENDER,
// alternating Write and TryClaim+Commit, retrying while the ring is full.
func childProducer() error {
	r, err := openChildRing()
	if err != nil {
		return err
	}
	defer r.Close()
	sender, count := envInt("DUTY_IPC_SENDER"), envInt("DUTY_IPC_COUNT")
	var buf [maxTestPayload]byte
	for seq := 0; seq < count; seq++ {
		p := testPayload(buf[:], sender, uint64(seq))
		for spins := 0; ; spins++ {
			if seq%3 == 0 {
				c, err := r.TryClaim(testTypeID, len(p))
				if err == nil {
					copy(c.Payload, p)
					err = r.Commit(c.Index)
				}
				if err == nil {
					break
				}
				if err != ringbuf.ErrFull {
					return err
				}
			} else {
				err := r.Write(testTypeID, p)
				if err == nil {
					break
				}
				if err != ringbuf.ErrFull {
					return err
				}
			}
			backoff(spins)
		}
	}
	return nil
}

func backoff(spins int) {
	if spins < 100 {
		runtime.Gosched()
	} else {
		time.Sleep(50 * time.Microsecond)
	}
}

// childClaimer claims space, says so, and waits to be killed.
func childClaimer() error {
	r, err := openChildRing()
	if err != nil {
		return err
	}
	var c ringbuf.Claim
	for spins := 0; ; spins++ {
		if c, err = r.TryClaim(testTypeID, 24); err != ringbuf.ErrFull {
			break
		}
		backoff(spins)
	}
	if err != nil {
		return err
	}
	fmt.Printf("claimed %d\n", c.Index)
	time.Sleep(time.Hour)
	return errors.New("not killed")
}

// childCreator waits for a line on stdin, then races to create the file.
func childCreator() error {
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return err
	}
	var opts []Option
	if os.Getenv("DUTY_IPC_DIRECT") == "1" {
		opts = append(opts, withDirectCreate())
	}
	r, err := CreateRing(os.Getenv("DUTY_IPC_DIR"), os.Getenv("DUTY_IPC_NAME"), 1024, opts...)
	switch {
	case err == nil:
		fmt.Println("won")
		return r.Close()
	case errors.Is(err, errExists):
		fmt.Println("exists")
		return nil
	}
	return err
}

// childOpener opens DUTY_IPC_PATH, or creates DUTY_IPC_NAME in
// DUTY_IPC_DIR, and prints which sentinel the error matched.
func childOpener() error {
	var err error
	if os.Getenv("DUTY_IPC_OP") == "create" {
		var f *File
		if f, err = create(os.Getenv("DUTY_IPC_DIR"), os.Getenv("DUTY_IPC_NAME"), KindRing, []int{1024 + ringbuf.TrailerLength}); err == nil {
			err = f.Close()
		}
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var f *File
		if f, err = open(ctx, os.Getenv("DUTY_IPC_PATH")); err == nil {
			err = f.Close()
		}
	}
	switch {
	case err == nil:
		fmt.Println("ok")
	case errors.Is(err, errPermission):
		fmt.Println("permission")
	default:
		fmt.Println("other:", err)
	}
	return nil
}

// childOwner creates a ring, heartbeats once, says so, and waits to be
// killed.
func childOwner() error {
	r, err := CreateRing(os.Getenv("DUTY_IPC_DIR"), os.Getenv("DUTY_IPC_NAME"), 1024)
	if err != nil {
		return err
	}
	if err := r.File.Heartbeat(time.Now().UnixMilli()); err != nil {
		return err
	}
	if err := r.Write(testTypeID, []byte("from the owner")); err != nil {
		return err
	}
	fmt.Println("ready")
	time.Sleep(time.Hour)
	return errors.New("not killed")
}

// childSigbus truncates its ring's file under the mapping and reads the
// ring without a guard: the process must die of SIGBUS.
func childSigbus() error {
	r, err := openChildRing()
	if err != nil {
		return err
	}
	if err := os.Truncate(os.Getenv("DUTY_IPC_PATH"), 0); err != nil {
		return err
	}
	n, err := r.Read(func(int32, []byte) {}, ringbuf.NoLimit)
	fmt.Println("survived", n, err)
	return nil
}

// The test message: sender, sequence, a length that varies with the
// sequence (so records wrap at every alignment), and a CRC of the rest.
const (
	testTypeID     = 7
	maxTestPayload = 64
)

func testPayload(buf []byte, sender int, seq uint64) []byte {
	n := 16 + int(seq*7%uint64(maxTestPayload-16+1))
	p := buf[:n]
	binary.LittleEndian.PutUint32(p[0:], uint32(sender))
	binary.LittleEndian.PutUint64(p[4:], seq)
	for i := 16; i < n; i++ {
		p[i] = byte(uint64(sender)*131 + seq*31 + uint64(i))
	}
	binary.LittleEndian.PutUint32(p[12:], crc32.ChecksumIEEE(append(p[:12:12], p[16:]...)))
	return p
}

// checkTestPayload returns the sender and sequence of p, or an error if p
// is not exactly testPayload(sender, seq).
func checkTestPayload(p []byte) (int, uint64, error) {
	if len(p) < 16 {
		return 0, 0, fmt.Errorf("payload of %d bytes", len(p))
	}
	sender := int(binary.LittleEndian.Uint32(p))
	seq := binary.LittleEndian.Uint64(p[4:])
	var buf [maxTestPayload]byte
	if want := testPayload(buf[:], sender, seq); string(want) != string(p) {
		return sender, seq, fmt.Errorf("sender %d seq %d: payload %x, want %x", sender, seq, p, want)
	}
	return sender, seq, nil
}

// testDir returns a fresh directory on /dev/shm (where it exists: the file
// system duty files normally live on), removed after the test.
func testDir(t testing.TB) string {
	t.Helper()
	base := os.TempDir()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		base = "/dev/shm"
	}
	dir, err := os.MkdirTemp(base, "duty-ipc-test-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// proc is a child process of this test.
type proc = childtest.Proc

// startChild prepares the test binary (or exe, if not empty) in role with
// env added (childtest.Command); Start starts it.
func startChild(t *testing.T, exe, role string, env ...string) *proc {
	t.Helper()
	return childtest.Command(t, exe, childEnv, role, env...)
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
