package dutyfx

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/mailbox"
)

type ticking struct {
	agent.Agent
	next time.Time
}

func (t ticking) NextDeadline() time.Time { return t.next }

func TestParseWakeIdle(t *testing.T) {
	mb, err := mailbox.New(mailbox.Config{Name: "in"})
	require.NoError(t, err)
	actor, err := mailbox.NewActor("in", mb, func(*mailbox.Message) mailbox.Action { return mailbox.Continue })
	require.NoError(t, err)
	feed := ticking{Agent: &idleAgent{role: "feed"}, next: time.Now().Add(time.Millisecond)}
	both, err := agent.NewComposite(actor, feed)
	require.NoError(t, err)

	s, err := parseIdle("wake", both)
	require.NoError(t, err)
	require.Equal(t, "wake:1000:100ms", s.String())
	s, err = parseIdle("wake:10:2ms", actor)
	require.NoError(t, err)
	require.Equal(t, "wake:10:2ms", s.String())
	for range 20 {
		s.Idle(0) // spins, then sleeps for 2 ms at most: nothing arrives
	}

	_, err = parseIdle("wake", &idleAgent{role: "x"})
	require.ErrorContains(t, err, "drains no mailbox", "an agent with nothing to wake it would sleep through its work")
	s, err = parseIdle("wake", feed)
	require.NoError(t, err, "a feed on a clock sleeps until its next tick")
	s.Idle(0)
	for _, bad := range []string{"wake:x", "wake:0", "wake:1:-1s", "wake:1:1s:2"} {
		_, err = parseIdle(bad, actor)
		require.Error(t, err, bad)
	}
	s, err = parseIdle("spin", feed)
	require.NoError(t, err)
	require.Equal(t, "spin", s.Alias())
}

type idleAgent struct{ role string }

func (a *idleAgent) RoleName() string     { return a.role }
func (a *idleAgent) OnStart() error       { return nil }
func (a *idleAgent) OnClose() error       { return nil }
func (a *idleAgent) DoWork() (int, error) { return 0, nil }
