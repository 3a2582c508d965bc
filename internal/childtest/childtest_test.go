package childtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const env = "DUTY_CHILDTEST_CHILD"

func TestMain(m *testing.M) {
	Run(env, map[string]func() error{
		"echo": func() error {
			fmt.Println("hello", os.Getenv("DUTY_CHILDTEST_WORD"))
			fmt.Println("bye")
			return nil
		},
		"fail": func() error { return errors.New("on purpose") },
		"hang": func() error {
			fmt.Println("up")
			time.Sleep(time.Hour)
			return nil
		},
	})
	os.Exit(m.Run())
}

// A child runs its role, not the tests, with the variables it was given,
// and its lines come in order, then the end of its output.
func TestRoleRunsWithItsVariables(t *testing.T) {
	p := Start(t, env, "echo", "DUTY_CHILDTEST_WORD=world")
	require.Equal(t, "hello world", p.Line(t))
	require.Equal(t, "bye", <-p.LineAsync())
	require.Empty(t, p.Next(), "the output has ended")
	require.NoError(t, p.Wait(t))
}

// A role that fails, or an unknown one, exits with status 1 and says why.
func TestFailingRoleExitsWithOne(t *testing.T) {
	for role, why := range map[string]string{"fail": "on purpose", "nope": `unknown role "nope"`} {
		p := Start(t, env, role)
		var exit *exec.ExitError
		require.ErrorAs(t, p.Wait(t), &exit)
		require.Equal(t, 1, exit.ExitCode())
		require.Contains(t, p.Stderr.String(), why)
	}
}

// Kill ends a child that would run for an hour.
func TestKillEndsTheChild(t *testing.T) {
	p := Start(t, env, "hang")
	require.Equal(t, "up", p.Line(t))
	p.Kill(t)
	require.False(t, p.Cmd.ProcessState.Success())
}
