package journal

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/dutyrt/duty/internal/journalfile"
	"github.com/stretchr/testify/require"
)

// A writer SIGKILLed at random moments, under each flush policy: after
// reopening, every record whose Commit returned is present and intact, in
// order, the torn tail is gone (a strict Open succeeds), the stream
// indexes agree with the log, and appending continues where the last
// writer stopped. A process crash keeps the page
// cache, so this holds under every policy; what a machine crash loses is
// stated in docs/journal.md, "Durability".
func TestCrashedWriterLosesNoCommittedRecord(t *testing.T) {
	dir := testDir(t)
	acked := map[uint32]int64{} // per stream: records acknowledged
	rng := rand.New(rand.NewPCG(1, uint64(soak(1))))
	for iter := range soak(6) {
		policy := FlushPolicy(iter % 3)
		p := startChild(t, "writer", "DUTY_JOURNAL_DIR="+dir, "DUTY_JOURNAL_POLICY="+strconv.Itoa(int(policy)))
		killAt := 1 + rng.IntN(1500)
		for range killAt {
			line := p.Next()
			if line == "" {
				t.Fatalf("writer ended early; stderr: %s", p.Stderr)
			}
			f := strings.Fields(line)
			require.Len(t, f, 3, line)
			stream, _ := strconv.Atoi(f[1])
			seq, _ := strconv.ParseInt(f[2], 10, 64)
			require.Equal(t, acked[uint32(stream)], seq, "child appended out of sequence")
			acked[uint32(stream)] = seq + 1
		}
		p.Kill(t)

		j, err := Open(dir, Options{SegmentSize: testSegment})
		require.NoError(t, err, "iteration %d (policy %d)", iter, policy)
		got := readAll(t, j)
		checkIndexes(t, j)
		for s, n := range acked {
			require.GreaterOrEqual(t, got[s], n, "iteration %d: stream %d lost acknowledged records", iter, s)
			require.Equal(t, got[s], j.nextSequence(s))
			acked[s] = got[s] // a record committed but not yet acknowledged is kept too
		}
		if iter%2 == 0 { // the recovering writer appends as well
			appendN(t, j, 1, 3)
			acked[1] += 3
		}
		t.Logf("iteration %d, policy %d, killed after %d: %v", iter, policy, killAt, j.Recovery())
		require.NoError(t, j.Close())
	}
	j := openT(t, dir, Options{})
	require.Equal(t, fmt.Sprint(acked), fmt.Sprint(readAll(t, j)))
}

// A writer killed between Claim and Commit leaves a body without a length
// word: recovery zeroes it and the next record takes its place.
func TestKilledClaimIsTornTail(t *testing.T) {
	dir := testDir(t)
	p := startChild(t, "tear", "DUTY_JOURNAL_DIR="+dir, "DUTY_JOURNAL_POLICY=2")
	line := p.Next()
	pos, err := strconv.ParseInt(strings.TrimPrefix(line, "claimed "), 10, 64)
	require.NoError(t, err, "line %q, stderr %s", line, p.Stderr)
	p.Kill(t)
	j := openT(t, dir, Options{})
	r := j.Recovery()
	require.Equal(t, pos, r.TornAt, r.String())
	require.Equal(t, int64(journalfile.RecordHeaderLength+200), r.TornBytes)
	require.Equal(t, pos, r.End)
	appendN(t, j, 1, 2)
	require.Equal(t, map[uint32]int64{1: 5}, readAll(t, j))
}

// A reader in another process follows the live tail of this process's
// writer through its own read-only mappings.
func TestReaderInAnotherProcess(t *testing.T) {
	dir := testDir(t)
	j := openT(t, dir, Options{})
	appendN(t, j, 1, 1) // the reader needs an existing journal
	const n = 3000
	p := startChild(t, "reader", "DUTY_JOURNAL_DIR="+dir, "DUTY_JOURNAL_COUNT="+strconv.Itoa(n))
	for i := 1; i < n; i++ {
		appendN(t, j, uint32(1+i%2), 1)
	}
	require.Equal(t, fmt.Sprintf("read %d", n), p.Next(), "stderr: %s", p.Stderr)
	require.NoError(t, p.Cmd.Wait())
}

// A writer in another process is refused while this one holds the
// journal, and takes it once this one closes (or dies: the kernel drops
// the flock).
func TestSecondWriterInAnotherProcessIsRefused(t *testing.T) {
	dir := testDir(t)
	j, err := Open(dir, Options{SegmentSize: testSegment, Logger: quiet})
	require.NoError(t, err)
	p := startChild(t, "opener", "DUTY_JOURNAL_DIR="+dir)
	require.Equal(t, "locked", p.Next(), "stderr: %s", p.Stderr)
	require.NoError(t, p.Cmd.Wait())
	require.NoError(t, j.Close())
	p = startChild(t, "opener", "DUTY_JOURNAL_DIR="+dir)
	require.Equal(t, "opened", p.Next(), "stderr: %s", p.Stderr)
	require.NoError(t, p.Cmd.Wait())

	w := startChild(t, "writer", "DUTY_JOURNAL_DIR="+dir, "DUTY_JOURNAL_POLICY=0")
	require.NotEmpty(t, w.Next(), "stderr: %s", w.Stderr)
	_, err = Open(dir, Options{SegmentSize: testSegment, Logger: quiet})
	require.ErrorIs(t, err, ErrLocked)
	w.Kill(t)
	j = openT(t, dir, Options{})
	require.NotZero(t, j.nextSequence(1))
}
