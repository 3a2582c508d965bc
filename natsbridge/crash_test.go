package natsbridge

import (
	"context"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/childtest"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/mailbox"
)

// Crash tests re-execute the test binary with childEnv set to a role;
// parameters come in DUTY_NB_* variables.
const childEnv = "DUTY_NATSBRIDGE_CHILD"

// childRoles are the roles a child runs (TestMain: childtest.Run).
var childRoles = map[string]func() error{
	"inbound": func() error {
		go func() { // a child never outlives its parent: the parent holds our stdin
			_, _ = io.Copy(io.Discard, os.Stdin)
			os.Exit(3)
		}()
		return childInbound()
	},
}

// childInbound delivers the stream into the mailbox file at DUTY_NB_PATH
// until it is killed.
func childInbound() error {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	mb, _, err := ipc.OpenMailbox(c, os.Getenv("DUTY_NB_PATH"))
	if err != nil {
		return err
	}
	cfg := Config{
		Name: "crash", Subject: os.Getenv("DUTY_NB_SUBJECT"), URL: os.Getenv("DUTY_NB_URL"), Logger: quiet,
		JetStream: &JetStream{Stream: os.Getenv("DUTY_NB_STREAM"), AckWait: 300 * time.Millisecond, FetchWait: 200 * time.Millisecond},
	}
	in, err := NewInbound(c, cfg, mb)
	if err != nil {
		return err
	}
	fmt.Println("ready")
	for {
		n, err := in.DoWork()
		if err != nil {
			return err
		}
		if n == 0 {
			time.Sleep(20 * time.Microsecond)
		}
	}
}

// startChild starts the test binary in role (childtest.Start) and waits
// for its "ready".
func startChild(t *testing.T, role string, env ...string) *childtest.Proc {
	t.Helper()
	p := childtest.Start(t, childEnv, role, env...)
	require.Equal(t, "ready", p.Line(t))
	return p
}

// The inbound bridge runs in a child process delivering into a mailbox in a
// shared file, and is killed with SIGKILL while it holds a batch partly
// delivered; a second child takes over the durable consumer. Every message
// reaches the mailbox, in order; the only repeats are the delivered part of
// the batch the first child had not acknowledged, delivered again whole
// (docs/natsbridge.md, "Limitations": the mailbox outlives the bridge).
func TestJetStreamInboundProcessKilled(t *testing.T) {
	s := runServer(t, jsServerOptions(t))
	dst, mf, err := ipc.CreateMailbox(t.TempDir(), "in", mailbox.Config{Capacity: 2048, UnblockTimeout: 100 * time.Millisecond})
	require.NoError(t, err)
	defer mf.Close()

	src := newMailboxMax(t, 1<<16, 1024)
	cfg := jsConfig(s, "crash")
	cfg.BatchBytes = 2048
	out, err := NewOutbound(ctx(t), cfg, src)
	require.NoError(t, err)
	n := 3000
	f := &feeder{mb: src, upTo: n}
	pump(t, func() bool { return f.sent == n && src.Stats().Depth == 0 }, f, out)
	require.NoError(t, out.OnClose()) // the whole stream is stored
	perBatch := out.Stats().Batched / out.Stats().Published

	env := []string{"DUTY_NB_PATH=" + mf.File.Path(), "DUTY_NB_SUBJECT=" + cfg.Subject,
		"DUTY_NB_URL=" + s.ClientURL(), "DUTY_NB_STREAM=" + cfg.JetStream.Stream}
	var got []int
	drain := doerFunc(func() (int, error) {
		return dst.Drain(func(m *mailbox.Message) mailbox.Action {
			var i int
			p := m.Parts()
			_, err := fmt.Sscanf(string(p[len(p)-1]), "message %d", &i)
			require.NoError(t, err)
			got = append(got, i)
			return mailbox.Continue
		}, 10) // slowly: the child is held mid-batch by the full mailbox
	})
	first := startChild(t, "inbound", env...)
	pump(t, func() bool { return len(got) >= n/3 }, drain)
	// The child pulls a batch only into an empty mailbox, and a batch is
	// larger than the mailbox: empty it, stop draining, and once it is
	// full the child holds a batch partly delivered.
	full := func() bool { return dst.Stats().Depth > dst.Capacity()-80 }
	for attempt := 0; !full(); attempt++ {
		require.Less(t, attempt, 20, "the mailbox never filled")
		pump(t, func() bool { return dst.Stats().Depth == 0 }, drain)
		// A batch smaller than the mailbox (one sealed by the flush bound)
		// leaves it part full: then take the next one.
		for end := time.Now().Add(200 * time.Millisecond); !full() && time.Now().Before(end); {
			time.Sleep(100 * time.Microsecond)
		}
	}
	first.Kill(t)
	require.Less(t, len(got)+dst.Stats().Depth/16, n, "killed before the end")
	startChild(t, "inbound", env...)
	pump(t, func() bool { return len(got) > 0 && got[len(got)-1] == n-1 }, drain)

	// got is 0..k, then a restart at some j <= k+1 (the batch not
	// acknowledged), then j..n-1.
	restart := -1
	for i := 1; i < len(got); i++ {
		if got[i] != got[i-1]+1 {
			require.Equal(t, -1, restart, "one restart at most: %v", got[i-1:i+1])
			require.LessOrEqual(t, got[i], got[i-1], "a gap: messages lost")
			restart = i
		}
	}
	require.Equal(t, 0, got[0])
	// Repeats: the part of one batch that the mailbox held when the child
	// died (its records are at least 24 bytes).
	repeats := len(got) - n
	require.LessOrEqual(t, repeats, dst.Capacity()/24, "more than the held batch repeated")
	t.Logf("%d messages, %d repeated (batches of %d on average), torn %d", len(got), repeats, perBatch, dst.Stats().Torn)
}
