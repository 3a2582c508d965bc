package agent

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestInvokerLifecycle(t *testing.T) {
	var log []string
	a := &scripted{role: "a", log: &log, results: []result{{3, nil}, {0, nil}}}
	inv, err := NewInvoker(a)
	require.NoError(t, err)
	n, err := inv.Invoke()
	require.NoError(t, err)
	require.Zero(t, n, "not started: the agent is not touched")
	require.Empty(t, log)

	require.NoError(t, inv.Start())
	require.NoError(t, inv.Start(), "only the first start does anything")
	require.True(t, inv.started)
	require.True(t, inv.IsRunning())
	require.NotNil(t, a.ctx, "context bound before OnStart")

	n, err = inv.Invoke()
	require.NoError(t, err)
	require.Equal(t, 3, n)
	n, err = inv.Invoke()
	require.NoError(t, err)
	require.Zero(t, n)

	require.NoError(t, inv.Close())
	require.NoError(t, inv.Close())
	require.True(t, inv.closed)
	require.False(t, inv.IsRunning())
	require.ErrorIs(t, a.ctx.Err(), context.Canceled)
	n, _ = inv.Invoke()
	require.Zero(t, n)
	require.Equal(t, []string{"start a", "work a", "work a", "close a"}, log)
	require.ErrorIs(t, inv.Start(), ErrClosed)
	_, err = NewInvoker(nil)
	require.ErrorIs(t, err, ErrArgument)
}

func TestInvokerStartFailureClosesTheAgent(t *testing.T) {
	var log []string
	bad := errors.New("bad")
	var reported []error
	inv, err := NewInvoker(&scripted{role: "a", log: &log, startErr: bad},
		WithErrorHandler(func(err error) { reported = append(reported, err) }))
	require.NoError(t, err)
	require.ErrorIs(t, inv.Start(), bad)
	require.True(t, inv.closed)
	require.Equal(t, []string{"start a", "close a"}, log)
	require.Len(t, reported, 1)
}

func TestInvokerErrorRules(t *testing.T) {
	var log []string
	boom := errors.New("boom")
	var reported []error
	a := &scripted{role: "a", log: &log, results: []result{{0, boom}, {1, nil}, {0, ErrTerminated}}}
	inv, err := NewInvoker(a, WithErrorHandler(func(err error) { reported = append(reported, err) }))
	require.NoError(t, err)
	require.NoError(t, inv.Start())

	_, err = inv.Invoke()
	require.Equal(t, boom, err)
	require.True(t, inv.IsRunning(), "an ordinary error does not stop the agent")
	_, err = inv.Invoke()
	require.NoError(t, err)
	_, err = inv.Invoke()
	require.ErrorIs(t, err, ErrTerminated)
	require.True(t, inv.closed, "termination closes: OnClose already ran")
	require.Equal(t, []error{boom, ErrTerminated}, reported)
	require.Equal(t, []string{"start a", "work a", "work a", "work a", "close a"}, log)
}

func TestInvokerExpectedTerminationIsSilent(t *testing.T) {
	var log []string
	var reported []error
	inv, err := NewInvoker(&scripted{role: "a", log: &log, results: []result{{0, ErrDone}}},
		WithErrorHandler(func(err error) { reported = append(reported, err) }))
	require.NoError(t, err)
	require.NoError(t, inv.Start())
	_, err = inv.Invoke()
	require.ErrorIs(t, err, ErrDone)
	require.True(t, inv.closed)
	require.Empty(t, reported)
}

// selfCloser closes its own invoker from OnStart.
type selfCloser struct {
	scripted
	inv *Invoker
}

func (s *selfCloser) OnStart() error {
	_ = s.scripted.OnStart()
	return s.inv.Close()
}

// Close from inside OnStart closes the agent: Invoke must not call DoWork
// on it afterwards (DoWork after OnClose breaks the agent contract).
func TestInvokerCloseFromOnStartNeverRunsDoWork(t *testing.T) {
	var log []string
	a := &selfCloser{scripted: scripted{role: "a", log: &log}}
	inv, err := NewInvoker(a)
	require.NoError(t, err)
	a.inv = inv
	require.NoError(t, inv.Start())
	require.True(t, inv.closed)
	require.False(t, inv.IsRunning(), "closed by OnStart")
	n, err := inv.Invoke()
	require.NoError(t, err)
	require.Zero(t, n)
	require.Equal(t, []string{"start a", "close a"}, log)
}
