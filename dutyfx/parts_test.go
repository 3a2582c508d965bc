package dutyfx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/fx"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/runner"
)

// An application of two mailboxes of one Go type (on the heap and in a
// shared file), a counters file and an error log, wired by name: the
// files exist while it runs, are heartbeaten by the keeper, and are gone
// after it stops.
func TestPartsByName(t *testing.T) {
	dir := t.TempDir()
	var (
		delivered []int32
		in        *mailbox.Mailbox
		fills     *mailbox.Mailbox
		mf        *ipc.MailboxFile
		cf        *ipc.CountersFile
		g         *runner.Group
		k         *ipc.Keeper
	)
	app := fx.New(fx.NopLogger,
		Runners,
		SharedFiles(dir),
		SharedMailbox("orders", mailbox.Config{Capacity: 64 << 10}),
		Mailbox("fills", mailbox.Config{}),
		Counters("counters", 16),
		ErrorLog("errors", 64<<10),
		fx.Provide(AsAgent(func(orders *mailbox.Mailbox, ef *ipc.ErrorLogFile) (agent.Agent, error) {
			if ef.Log() == nil {
				return nil, errors.New("the owner's error log has no Log")
			}
			return mailbox.NewActor("engine", orders, func(m *mailbox.Message) mailbox.Action {
				delivered = append(delivered, m.TypeID())
				return mailbox.Continue
			})
		}, fx.ParamTags(Named("orders"), Named("errors")))),
		fx.Populate(fx.Annotate(&in, fx.ParamTags(Named("orders")))),
		fx.Populate(fx.Annotate(&fills, fx.ParamTags(Named("fills")))),
		fx.Populate(fx.Annotate(&mf, fx.ParamTags(Named("orders")))),
		fx.Populate(fx.Annotate(&cf, fx.ParamTags(Named("counters")))),
		fx.Populate(&g, &k),
	)
	require.NoError(t, app.Err())
	require.NotSame(t, in, fills)
	require.Equal(t, "fills", fills.Name())
	require.Equal(t, filepath.Join(dir, "orders"), mf.File.Path())
	for _, name := range []string{"orders", "counters", "errors"} {
		require.FileExists(t, filepath.Join(dir, name))
	}
	beaten, err := k.DoWork() // its first cycle beats every file it keeps
	require.NoError(t, err)
	require.Equal(t, 3, beaten, "the keeper keeps the three shared files")

	require.NoError(t, app.Start(context.Background()))
	require.NotNil(t, g.Runner(keeperRole))
	require.NotNil(t, g.Runner("engine"))

	// Another process's view of the mailbox, as a sender would open it.
	out, sf, err := ipc.OpenMailbox(context.Background(), mf.File.Path())
	require.NoError(t, err)
	require.NoError(t, out.Send(5, []byte("x")))
	waitFor(t, func() bool { return in.Stats().Delivered == 1 })
	require.NoError(t, sf.Close())
	l, err := cf.File.Liveness(time.Now(), 0)
	require.NoError(t, err)
	require.Equal(t, ipc.OwnerAlive, l.State)

	require.NoError(t, app.Stop(context.Background()))
	require.Equal(t, []int32{5}, delivered)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "every file removed on stop")
}

// Config.OnStopped runs on fx stop after the group has stopped and before
// the shared files go, whichever part of the graph made them: here a
// counters file no agent needs (only fx.Populate asks for it, after the
// group is built) outlives the agents, and OnStopped reads the value an
// agent left in it.
func TestOnStoppedReadsTheFilesAfterTheGroup(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "stats")
	var events []string
	var (
		cf *ipc.CountersFile
		c  *counters.Counter
	)
	app := fx.New(fx.NopLogger,
		Runners,
		SharedFiles(dir),
		fx.Supply(Config{OnStopped: func(context.Context) error {
			_, err := os.Stat(path)
			events = append(events, fmt.Sprintf("stopped: file there %v, count %d", err == nil, c.Word().Load()))
			return nil
		}}),
		fx.Provide(AsAgent(func() agent.Agent {
			return &fakeAgent{role: "worker", close: func() error {
				_, err := os.Stat(path)
				events = append(events, fmt.Sprintf("agent closed: file there %v", err == nil))
				return nil
			}}
		})),
		fx.Invoke(func(*runner.Group) {}),
		Counters("stats", 4),
		fx.Populate(fx.Annotate(&cf, fx.ParamTags(Named("stats")))),
	)
	require.NoError(t, app.Err())
	var err error
	c, err = cf.Manager().Allocate("done", 1, nil)
	require.NoError(t, err)
	require.NoError(t, app.Start(context.Background()))
	c.Word().Store(7)
	require.NoError(t, app.Stop(context.Background()))
	require.Equal(t, []string{"agent closed: file there true", "stopped: file there true, count 7"}, events)
	_, err = os.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist, "removed after OnStopped")
}

// SharedFiles's keeper sleeps between its beats whatever DefaultIdle
// says: with a spinning default it still beats every period (a quarter of
// the liveness timeout the test sets) and runs a handful of duty cycles in
// between, where a polling keeper runs far more.
func TestKeeperSleepsBetweenBeats(t *testing.T) {
	var (
		g  *runner.Group
		cf *ipc.CountersFile
	)
	app := fx.New(fx.NopLogger,
		Runners,
		fx.Supply(Config{DefaultIdle: "spin"}),
		SharedFiles(t.TempDir(), ipc.WithLivenessTimeout(400*time.Millisecond)),
		Counters("stats", 4),
		fx.Populate(&g, fx.Annotate(&cf, fx.ParamTags(Named("stats")))),
	)
	require.NoError(t, app.Err())
	require.NoError(t, app.Start(context.Background()))
	defer func() { require.NoError(t, app.Stop(context.Background())) }()
	keeper := g.Runner(keeperRole)
	require.NotNil(t, keeper)
	heartbeat := func() int64 {
		l, err := cf.File.Liveness(time.Now(), 0)
		require.NoError(t, err)
		require.Equal(t, ipc.OwnerAlive, l.State)
		return l.HeartbeatMillis
	}
	waitFor(t, func() bool { return keeper.Stats().DutyCycles > 0 })
	cycles, beat := keeper.Stats().DutyCycles, heartbeat()
	waitFor(t, func() bool { return heartbeat() >= beat+200 }) // two periods on
	require.Less(t, keeper.Stats().DutyCycles-cycles, int64(100), "the keeper polled between beats")
}
