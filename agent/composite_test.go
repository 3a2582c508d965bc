package agent

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewCompositeValidates(t *testing.T) {
	_, err := NewComposite()
	require.ErrorIs(t, err, ErrArgument)
	var log []string
	_, err = NewComposite(&scripted{role: "a", log: &log}, nil)
	require.ErrorIs(t, err, ErrArgument)
}

func TestCompositeRoleAndLifecycleReachEveryMember(t *testing.T) {
	var log []string
	e1, e3 := errors.New("e1"), errors.New("e3")
	a := &scripted{role: "a", log: &log, startErr: e1, closeErr: e1}
	b := &scripted{role: "b", log: &log}
	c := &scripted{role: "c", log: &log, startErr: e3, closeErr: e3}
	comp, err := NewComposite(a, b, c)
	require.NoError(t, err)
	require.Equal(t, "[a,b,c]", comp.RoleName())

	err = comp.OnStart()
	require.ErrorIs(t, err, e1)
	require.ErrorIs(t, err, e3)
	err = comp.OnClose()
	require.ErrorIs(t, err, e1)
	require.ErrorIs(t, err, e3)
	require.Equal(t, []string{"start a", "start b", "start c", "close a", "close b", "close c"}, log)
	require.NoError(t, mustComposite(t, b).OnStart())
}

func mustComposite(t *testing.T, agents ...Agent) *composite {
	c, err := NewComposite(agents...)
	require.NoError(t, err)
	return c.(*composite)
}

func TestCompositeSumsPositiveWork(t *testing.T) {
	var log []string
	comp := mustComposite(t,
		&scripted{role: "a", log: &log, results: []result{{2, nil}, {-1, nil}}},
		&scripted{role: "b", log: &log, results: []result{{3, nil}, {4, nil}}},
	)
	n, err := comp.DoWork()
	require.NoError(t, err)
	require.Equal(t, 5, n)
	n, err = comp.DoWork()
	require.NoError(t, err)
	require.Equal(t, 4, n, "a negative count is an error code, not negative work")
}

func TestCompositeFailingMemberDoesNotStarveTheOthers(t *testing.T) {
	var log []string
	boom := errors.New("boom")
	a := &scripted{role: "a", log: &log, results: []result{{1, nil}, {1, nil}, {1, nil}}}
	b := &scripted{role: "b", log: &log, results: []result{{5, boom}, {0, boom}, {0, boom}}}
	c := &scripted{role: "c", log: &log, results: []result{{1, nil}, {1, nil}, {1, nil}}}
	comp := mustComposite(t, a, b, c)

	n, err := comp.DoWork()
	require.ErrorIs(t, err, boom)
	require.Equal(t, 6, n, "work done before and by the failing member is kept")
	require.Equal(t, []string{"work a", "work b"}, log)

	log = log[:0]
	n, err = comp.DoWork()
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, []string{"work c"}, log, "resumes after the failing member")

	log = log[:0]
	_, err = comp.DoWork()
	require.ErrorIs(t, err, boom)
	log = log[:0]
	_, err = comp.DoWork()
	require.NoError(t, err)
	require.Equal(t, []string{"work c"}, log)
	require.Equal(t, 2, c.calls, "c ran once after each failing pass")
}

func TestCompositeTerminationOfAMemberStopsTheComposite(t *testing.T) {
	var log []string
	comp := mustComposite(t,
		&scripted{role: "a", log: &log, results: []result{{0, ErrDone}}},
		&scripted{role: "b", log: &log},
	)
	_, err := comp.DoWork()
	require.ErrorIs(t, err, ErrDone)
}

// panicker panics in the callbacks named in its set.
type panicker struct {
	scripted
	panicStart, panicClose bool
}

func (p *panicker) OnStart() error {
	_ = p.scripted.OnStart()
	if p.panicStart {
		panic("start " + p.role)
	}
	return nil
}

func (p *panicker) OnClose() error {
	_ = p.scripted.OnClose()
	if p.panicClose {
		panic("close " + p.role)
	}
	return nil
}

// A member whose OnClose panics must not keep the members after it from
// being closed: every member's OnClose runs exactly once (the agent
// contract), and the panic still reaches the driver.
func TestCompositeOnClosePanicStillClosesTheOtherMembers(t *testing.T) {
	for _, name := range []string{"Composite", "DynamicComposite"} {
		t.Run(name, func(t *testing.T) {
			var log []string
			a := &scripted{role: "a", log: &log}
			b := &panicker{scripted: scripted{role: "b", log: &log}, panicClose: true}
			c := &scripted{role: "c", log: &log}
			var comp Agent
			if name == "Composite" {
				comp = mustComposite(t, a, b, c)
			} else {
				d, err := NewDynamicComposite("d", a, b, c)
				require.NoError(t, err)
				comp = d
			}
			require.PanicsWithValue(t, "close b", func() { _ = comp.OnClose() })
			require.Equal(t, []string{"close a", "close b", "close c"}, log)
		})
	}
}
