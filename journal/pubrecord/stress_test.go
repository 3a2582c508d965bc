package pubrecord

import (
	"errors"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/ipc/publication"
)

// soak multiplies iteration counts by DUTY_SOAK (default 1).
func soak(n int) int {
	if f, err := strconv.Atoi(os.Getenv("DUTY_SOAK")); err == nil && f > 1 {
		return n * f
	}
	return n
}

// A live pipeline, each stage on its own goroutine: a publisher, the
// Recorder, a Replayer following the journal's tail into a second
// publication, and a subscriber of that one checking every message once,
// in order (-race: the journal's and the publications' orderings).
func TestLivePipelineExactlyOnceInOrder(t *testing.T) {
	n := soak(20000)
	shm := shmDir(t)
	src, sub := pubAndSub(t, shm, "src", 64<<10)
	dst, out := pubAndSub(t, shm, "dst", 64<<10)
	j := openJournal(t, t.TempDir())
	rec, err := NewRecorder("rec", j, 2, sub, 0)
	require.NoError(t, err)
	tl, err := j.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	rep, err := NewReplayer("rep", tl, dst, 0, 2)
	require.NoError(t, err)

	deadline := time.Now().Add(60 * time.Second)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	run := func(name string, step func() (bool, error)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				done, err := step()
				if err != nil {
					errs <- errors.New(name + ": " + err.Error())
					return
				}
				if done {
					return
				}
			}
			errs <- errors.New(name + ": timed out")
		}()
	}
	sent := 0
	run("publisher", func() (bool, error) {
		typeID, b := message(sent)
		_, err := src.Offer(typeID, b)
		if errors.Is(err, publication.ErrBackPressured) || errors.Is(err, publication.ErrAdminAction) {
			_ = src.Heartbeat(time.Now().UnixMilli())
			return false, nil
		}
		if err != nil {
			return false, err
		}
		sent++
		if sent == n {
			return true, src.Close()
		}
		return false, nil
	})
	run("recorder", func() (bool, error) {
		_, err := rec.DoWork()
		if errors.Is(err, agent.ErrDone) {
			return true, nil
		}
		return false, err
	})
	run("replayer", func() (bool, error) {
		_, err := rep.DoWork()
		_ = dst.Heartbeat(time.Now().UnixMilli())
		return rep.Sent() == int64(n), err
	})
	got := 0
	run("subscriber", func() (bool, error) {
		var bad error
		_, err := out.Poll(func(typeID int32, b []byte) {
			if e := checkMessage(got, typeID, b); e != nil && bad == nil {
				bad = e
			}
			got++
		}, 100)
		if err == nil {
			err = bad
		}
		return got == n, err
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	require.Equal(t, n, got)
}
