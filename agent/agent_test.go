package agent

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// scripted is a deterministic agent: work returns the next scripted result.
type scripted struct {
	role     string
	log      *[]string
	startErr error
	closeErr error
	results  []result
	calls    int
	ctx      context.Context
}

type result struct {
	n   int
	err error
}

func (s *scripted) RoleName() string { return s.role }
func (s *scripted) OnStart() error {
	*s.log = append(*s.log, "start "+s.role)
	return s.startErr
}
func (s *scripted) OnClose() error {
	*s.log = append(*s.log, "close "+s.role)
	return s.closeErr
}
func (s *scripted) DoWork() (int, error) {
	*s.log = append(*s.log, "work "+s.role)
	s.calls++
	if len(s.results) == 0 {
		return 0, nil
	}
	r := s.results[0]
	s.results = s.results[1:]
	return r.n, r.err
}
func (s *scripted) BindContext(ctx context.Context) { s.ctx = ctx }

func TestTerminationSentinels(t *testing.T) {
	require.ErrorIs(t, ErrDone, ErrTermination)
	require.ErrorIs(t, ErrTerminated, ErrTermination)
	require.NotErrorIs(t, ErrDone, ErrTerminated)
	require.NotErrorIs(t, ErrTerminated, ErrDone)

	cause := errors.New("socket gone")
	wrapped := fmt.Errorf("poll: %w", Terminate(cause))
	require.ErrorIs(t, wrapped, ErrTermination)
	require.ErrorIs(t, wrapped, cause)
	require.EqualError(t, wrapped, "poll: agent: terminated: socket gone")

	for _, tc := range []struct {
		err                 error
		terminate, expected bool
	}{
		{nil, false, false},
		{cause, false, false},
		{ErrDone, true, true},
		{fmt.Errorf("x: %w", ErrDone), true, true},
		{ErrTerminated, true, false},
		{ErrTermination, true, false},
		{fmt.Errorf("x: %w", ErrTermination), true, false},
		{&terminationError{Expected: true, Cause: cause}, true, true},
		// Joined errors: a stop is expected only if every branch is one.
		{errors.Join(cause, ErrDone), true, false},
		{errors.Join(ErrDone, cause), true, false},
		{fmt.Errorf("x: %w: %w", cause, ErrDone), true, false},
		{errors.Join(ErrDone, fmt.Errorf("y: %w", ErrDone)), true, true},
		{errors.Join(ErrDone, ErrTerminated), true, false},
		{errors.Join(cause, errors.New("other")), false, false},
		{fmt.Errorf("outer: %w", errors.Join(cause, Terminate(cause))), true, false},
		{fmt.Errorf("outer: %w", errors.Join(ErrDone)), true, true},
		{customTermination{}, true, false},
	} {
		term, exp := IsTermination(tc.err)
		require.Equal(t, tc.terminate, term, "%v", tc.err)
		require.Equal(t, tc.expected, exp, "%v", tc.err)
	}
}

// customTermination matches ErrTermination through its own Is method.
type customTermination struct{}

func (customTermination) Error() string        { return "custom stop" }
func (customTermination) Is(target error) bool { return target == ErrTermination }
