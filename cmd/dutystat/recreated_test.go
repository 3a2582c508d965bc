package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/countertype"
	"github.com/dutyrt/duty/ipc"
)

// A counters file removed and re-created under the same name between the
// two samples (a restarted process) is a different file: its counters must
// not get a rate computed against the old file's values.
func TestNoRateAcrossARecreatedFile(t *testing.T) {
	dir := t.TempDir()
	cf, err := ipc.CreateCounters(dir, "stats", 4, nil)
	require.NoError(t, err)
	c, err := cf.Manager().Allocate("orders", countertype.Errors, nil)
	require.NoError(t, err)
	c.Set(1_000_000)
	var cf2 *ipc.CountersFile
	t.Cleanup(func() {
		if cf2 != nil {
			cf2.Close()
		}
	})
	fe := &fakeEnv{t: time.Unix(1_700_000_000, 0)}
	fe.onSleep = func(time.Duration) {
		require.NoError(t, cf.File.Remove())
		require.NoError(t, cf.Close())
		// The same process re-creates it, so the owner is the same, and the
		// inode number may be reused: what differs is the header's creation
		// time, in ms. Within the same ms the two files cannot be told apart
		// (docs/operations.md); a restarted owner is another process.
		time.Sleep(2 * time.Millisecond)
		cf2, err = ipc.CreateCounters(dir, "stats", 4, nil)
		require.NoError(t, err)
		c2, err := cf2.Manager().Allocate("orders", countertype.Errors, nil)
		require.NoError(t, err)
		c2.Set(5)
	}
	var out, errOut bytes.Buffer
	code := runEnv(context.Background(), &out, &errOut, []string{"-dir", dir, "-json", "-window", "1s"}, fe.env())
	require.Equal(t, 0, code, errOut.String())
	var f frame
	require.NoError(t, json.Unmarshal(out.Bytes(), &f))
	require.Len(t, f.Files, 1)
	require.Len(t, f.Files[0].Counters, 1)
	cs := f.Files[0].Counters[0]
	require.Equal(t, int64(5), cs.Value)
	require.Nil(t, cs.RatePerSec, "rate %v computed against a different file's counter", deref(cs.RatePerSec))
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
