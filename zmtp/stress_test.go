package zmtp

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/zmtpwire"
)

// soak multiplies the stress tests' iteration counts (DUTY_SOAK).
func soak() int {
	if n, err := strconv.Atoi(os.Getenv("DUTY_SOAK")); err == nil && n > 0 {
		return n
	}
	return 1
}

// tagged is a message of the stress tests: "producer:seq", then a body
// that depends on both, so that a torn or mixed message shows.
func tagged(producer string, seq int) [][]byte {
	return [][]byte{[]byte(fmt.Sprintf("%s:%d", producer, seq)), pattern(seq+len(producer), 200+seq%400)}
}

// checker verifies exactly-once, per-producer order and intact bodies.
type checker struct {
	t    testing.TB
	last map[string]int
	n    int
}

func (c *checker) see(parts [][]byte) {
	c.t.Helper()
	require.Len(c.t, parts, 2)
	producer, seqText, ok := strings.Cut(string(parts[0]), ":")
	require.True(c.t, ok)
	seq, err := strconv.Atoi(seqText)
	require.NoError(c.t, err)
	require.True(c.t, bytes.Equal(tagged(producer, seq)[1], parts[1]), "body of %s", parts[0])
	last, seen := c.last[producer]
	require.True(c.t, !seen || seq > last, "%s:%d after %d: duplicate or out of order", producer, seq, last)
	c.last[producer] = seq
	c.n++
}

const childEnv = "ZMTP_TEST_CHILD"

// childMessages is how many whole messages the child writes before the
// message it is killed in.
const childMessages = 100

// runChild is the child process: a raw PUSH peer that writes
// childMessages whole messages, then the start of one more, says "ready"
// and waits to be killed.
func runChild(addr string) {
	c, err := netDial(addr)
	if err != nil {
		os.Exit(2)
	}
	g := zmtpwire.Greeting()
	_, _ = c.Write(g[:])
	if _, err := zmtpwire.ReadGreeting(c, zmtpwire.MechanismNULL); err != nil {
		os.Exit(3)
	}
	// Read the PULL's READY too: a process killed with unread bytes in
	// its socket resets the connection, and a reset throws away what its
	// kernel has not sent yet, whole messages included.
	if _, err := zmtpwire.NewDecoder(c, 0, 0).Next(); err != nil {
		os.Exit(4)
	}
	e := zmtpwire.NewEncoder(0)
	e.Command("READY", zmtpwire.ReadyProperties(Push.String(), nil))
	for i := range childMessages {
		e.Message(tagged("child", i)...)
	}
	e.Message(tagged("child", childMessages)...)
	var b bytes.Buffer
	_, _ = e.WriteTo(&b)
	// All but the end of the last message: the stream stops within it.
	_, _ = c.Write(b.Bytes()[:b.Len()-50])
	fmt.Println("ready")
	select {}
}

// Several producers, a reconnect storm and a peer process killed in the
// middle of a message: every message that arrives is whole, arrives once,
// and in its producer's order; all of the steady producers' and all of the
// child's whole messages arrive.
func TestStressProducersStormAndKilledPeer(t *testing.T) {
	pull := newSocket(t, Pull, Options{HWM: 64})
	addr := bind(t, pull, "tcp://127.0.0.1:0")
	producers, perProducer := 4, 500*soak()

	received := make(chan [][]byte, 1024)
	ctx, cancel := context.WithCancel(context.Background())
	var rwg sync.WaitGroup
	rwg.Add(1)
	go func() {
		defer rwg.Done()
		var m Message
		for pull.Recv(ctx, &m) == nil {
			cp := make([][]byte, len(m.Parts()))
			for i, p := range m.Parts() {
				cp[i] = bytes.Clone(p)
			}
			received <- cp
		}
		close(received)
	}()

	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			push := newSocket(t, Push, Options{HWM: 16})
			require.NoError(t, push.Connect(addr))
			name := fmt.Sprintf("p%d", p)
			for i := 0; i < perProducer; {
				if err := push.Send(tagged(name, i)...); err == ErrHWM {
					time.Sleep(50 * time.Microsecond)
					continue
				} else if err != nil {
					t.Error(err)
					return
				}
				i++
			}
		}()
	}
	for s := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 * soak() {
				// A producer per connection: order holds within one,
				// and Close's linger lets a storm socket's messages
				// arrive after a later socket's.
				push := newSocket(t, Push, Options{})
				require.NoError(t, push.Connect(addr))
				for seq := range 5 {
					_ = push.Send(tagged(fmt.Sprintf("storm%d.%d", s, i), seq)...)
				}
				_ = push.Close()
			}
		}()
	}

	// The child process: killed with the last message half written.
	cmd := exec.Command(os.Args[0], "-test.run=^$") // TestMain runs the child
	cmd.Env = append(os.Environ(), childEnv+"="+addr)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\n", line)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	c := &checker{t: t, last: map[string]int{}}
	want := producers*perProducer + childMessages
	steady := 0
	deadline := time.After(30 * time.Second)
	for steady < want {
		select {
		case m := <-received:
			c.see(m)
			if !strings.HasPrefix(string(m[0]), "storm") {
				steady++
			}
		case <-deadline:
			t.Fatalf("%d of %d messages", steady, want)
		}
	}
	wg.Wait()
	for p := range producers {
		require.Equal(t, perProducer-1, c.last[fmt.Sprintf("p%d", p)])
	}
	require.Equal(t, childMessages-1, c.last["child"], "the child's whole messages, not its torn one")
	eventually(t, func() bool { return pull.Stats().Torn >= 1 }, "the torn stream counted")
	cancel()
	for m := range received {
		c.see(m)
	}
	rwg.Wait()
	// Received counts a message a moment after Recv may have returned it.
	eventually(t, func() bool { return c.n <= int(pull.Stats().Received) }, "every message counted")
}

// Once a connection is up, a message costs no allocation on either side:
// Send, the writer's vectored write, the reader's decode, Recv.
func TestSendAndReceiveAllocateNothing(t *testing.T) {
	skipUnderRace(t)
	pull := newSocket(t, Pull, Options{})
	push := newSocket(t, Push, Options{})
	require.NoError(t, push.Connect(bind(t, pull, "tcp://127.0.0.1:0")))
	small, large := make([]byte, 32), make([]byte, 64<<10)
	ctx := context.Background()
	var m Message
	run := func() {
		if err := push.Send(small, large); err != nil {
			t.Fatal(err)
		}
		if err := pull.Recv(ctx, &m); err != nil {
			t.Fatal(err)
		}
	}
	for range 100 {
		run()
	}
	require.Zero(t, testing.AllocsPerRun(500, run))
}

// The same for PUB to SUB: matching the subscriptions, the per-subscriber
// queue, the SUB's own check.
func TestPubSubAllocateNothing(t *testing.T) {
	skipUnderRace(t)
	pub := newSocket(t, Pub, Options{})
	sub := newSocket(t, Sub, Options{})
	require.NoError(t, sub.Subscribe([]byte("q.")))
	require.NoError(t, sub.Connect(bind(t, pub, "tcp://127.0.0.1:0")))
	eventually(t, func() bool {
		ps := *pub.peersV.Load()
		return len(ps) == 1 && ps[0].subscribed([]byte("q."))
	}, "subscribed")
	topic, body := []byte("q.EURUSD"), make([]byte, 32)
	ctx := context.Background()
	var m Message
	run := func() {
		if err := pub.Send(topic, body); err != nil {
			t.Fatal(err)
		}
		if err := sub.Recv(ctx, &m); err != nil {
			t.Fatal(err)
		}
	}
	for range 100 {
		run()
	}
	require.Zero(t, testing.AllocsPerRun(500, run))
}
