//go:build linux

package runner

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/idle"
)

func TestThreadStaysTheSameAcrossCycles(t *testing.T) {
	a := &fakeAgent{role: "pinned"}
	var mu sync.Mutex
	tids := map[int]int{}
	a.start = func() error { mu.Lock(); tids[unix.Gettid()]++; mu.Unlock(); return nil }
	a.work = func(cycle int64) (int, error) {
		mu.Lock()
		tids[unix.Gettid()]++
		mu.Unlock()
		if cycle == 2000 {
			return 0, agent.ErrDone
		}
		return 0, nil
	}
	a.close = func() error { mu.Lock(); tids[unix.Gettid()]++; mu.Unlock(); return nil }
	// Yielding and parking are where a goroutine would change threads.
	s, err := idle.NewBackoff(idle.BackoffConfig{MaxSpins: 1, MaxYields: 1, MinPark: time.Microsecond, MaxPark: 4 * time.Microsecond})
	require.NoError(t, err)
	r, err := New(a, WithIdle(s))
	require.NoError(t, err)
	require.NoError(t, r.Start())
	waitDone(t, r)
	require.Len(t, tids, 1, "every callback on one thread: %v", tids)
	require.Equal(t, 2002, tids[r.threadID()])
}

func TestThreadNameIsTheRoleTruncatedTo15Bytes(t *testing.T) {
	for _, tc := range []struct{ role, opt, want string }{
		{"conductor", "", "conductor"},
		{"receiver-agent-number-one", "", "receiver-agent-"},
		{"ρρρρρρρρ", "", "ρρρρρρρ"}, // 16 bytes: cut on a rune boundary to 14
		{"role", "custom-name", "custom-name"},
	} {
		a := &fakeAgent{role: tc.role}
		comm := make(chan string, 1)
		a.work = func(cycle int64) (int, error) {
			b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(unix.Gettid()) + "/comm")
			if err != nil {
				return 0, err
			}
			comm <- strings.TrimSuffix(string(b), "\n")
			return 0, agent.ErrDone
		}
		opts := []Option{}
		if tc.opt != "" {
			opts = append(opts, WithThreadName(tc.opt))
		}
		r, err := New(a, opts...)
		require.NoError(t, err)
		require.NoError(t, r.Start())
		waitDone(t, r)
		require.Equal(t, tc.want, <-comm)
	}
}

func allowedCPUs(t *testing.T) []int {
	var set unix.CPUSet
	require.NoError(t, unix.SchedGetaffinity(0, &set))
	var cpus []int
	for i := range maxCPU {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	return cpus
}

func TestAffinityIsReadBackOnTheAgentThread(t *testing.T) {
	cpus := allowedCPUs(t)
	if len(cpus) < 1 {
		t.Skip("no CPU in the affinity mask")
	}
	// Each allowed CPU alone (up to two), then all of them together.
	sets := [][]int{{cpus[0]}}
	if len(cpus) >= 2 {
		sets = append(sets, []int{cpus[1]}, cpus[:2])
	}
	for _, want := range sets {
		a := &fakeAgent{role: "affine"}
		got := make(chan []int, 1)
		a.work = func(int64) (int, error) {
			var set unix.CPUSet
			if err := unix.SchedGetaffinity(0, &set); err != nil {
				return 0, err
			}
			var cs []int
			for i := range maxCPU {
				if set.IsSet(i) {
					cs = append(cs, i)
				}
			}
			got <- cs
			return 0, agent.ErrDone
		}
		r, err := New(a, WithCPUs(want...))
		require.NoError(t, err)
		require.NoError(t, r.Start())
		waitDone(t, r)
		require.Equal(t, want, <-got)
	}
	require.Equal(t, cpus, allowedCPUs(t), "the test's own thread is untouched")
}

func TestAffinityFailureIsReturnedByStart(t *testing.T) {
	cpus := allowedCPUs(t)
	bad := maxCPU - 1
	for _, c := range cpus {
		if c == bad {
			t.Skip("CPU", bad, "exists here")
		}
	}
	a := &fakeAgent{role: "nowhere"}
	r, err := New(a, WithCPUs(bad))
	require.NoError(t, err)
	err = r.Start()
	require.ErrorIs(t, err, ErrBadOption)
	require.Contains(t, err.Error(), "thread setup")
	require.ErrorIs(t, err, unix.EINVAL)
	require.Contains(t, err.Error(), "nowhere")
	require.Equal(t, []string{"close"}, a.Events(), "OnClose runs, OnStart never did")
	require.NoError(t, r.Close())
}

func TestTimerSlackIsSetOnTheAgentThread(t *testing.T) {
	a := &fakeAgent{role: "slack"}
	got := make(chan int, 1)
	a.work = func(int64) (int, error) {
		v, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
		if err != nil {
			return 0, err
		}
		got <- v
		return 0, agent.ErrDone
	}
	r, err := New(a, WithTimerSlack(1500*time.Nanosecond))
	require.NoError(t, err)
	require.NoError(t, r.Start())
	waitDone(t, r)
	require.Equal(t, 1500, <-got)
}

func TestCloseCalledOnTheAgentThreadIsDetected(t *testing.T) {
	r, err := New(&fakeAgent{role: "detect"})
	require.NoError(t, err)
	require.False(t, r.onAgentThread(), "not started")
	require.NoError(t, r.Start())
	require.False(t, r.onAgentThread(), "the test goroutine cannot be on the locked thread")
	require.NotZero(t, r.threadID())
	require.NoError(t, r.Close())
	require.False(t, r.onAgentThread(), "stopped")
}
