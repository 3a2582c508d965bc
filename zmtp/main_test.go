package zmtp

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dutyrt/duty/internal/buildtags"
)

// zmq4's PUB leaves its writer goroutine waiting on a condition after
// Close (go-zeromq/zmq4 v0.17.0): the only goroutine not ours that the
// interoperability tests leave behind.
func TestMain(m *testing.M) {
	if addr := os.Getenv(childEnv); addr != "" {
		runChild(addr)
	}
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/go-zeromq/zmq4.(*pubMWriter).run"))
}

// quiet keeps the tests' expected peer failures out of their output.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func newSocket(t testing.TB, typ Type, opt Options) *Socket {
	t.Helper()
	if opt.Logger == nil {
		opt.Logger = quiet
	}
	if opt.ReconnectMin == 0 {
		opt.ReconnectMin = 5 * time.Millisecond
		opt.ReconnectMax = 50 * time.Millisecond
	}
	s, err := NewSocket(typ, opt)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func bind(t testing.TB, s *Socket, ep string) string {
	t.Helper()
	got, err := s.Bind(ep)
	require.NoError(t, err)
	return got
}

// recv receives one message (copied) within a generous bound: the bound
// is a hang guard, not a timing assertion.
func recv(t testing.TB, s *Socket) [][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var m Message
	require.NoError(t, s.Recv(ctx, &m))
	out := make([][]byte, len(m.Parts()))
	for i, p := range m.Parts() {
		out[i] = append([]byte{}, p...)
	}
	return out
}

// eventually polls cond until it holds (hang guard of 10 s).
func eventually(t testing.TB, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func netDial(addr string) (net.Conn, error) {
	return net.Dial("tcp", strings.TrimPrefix(addr, "tcp://"))
}

// skipAllocs reports whether allocation counts mean nothing here: the
// race detector allocates.
func skipAllocs() bool { return buildtags.Race }

// skipUnderRace skips an allocation test: the race detector allocates.
func skipUnderRace(t *testing.T) {
	if buildtags.Race {
		t.Skip("the race detector allocates")
	}
}

// pattern returns n bytes depending on seed and offset.
func pattern(seed, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seed*131 + i*7 + i>>8)
	}
	return b
}
