package errlog

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadSinceFilter(t *testing.T) {
	buf := newBuf(1 << 14)
	clock := newClock(0)
	l := mustLog(t, buf, WithClock(clock))
	var steps []step
	for i := range 5 {
		steps = append(steps, step{int64(100 * (i + 1)), fmt.Errorf("e%d", i), nil})
	}
	steps = append(steps, step{1000, fmt.Errorf("e%d", 0), nil}) // e0 seen again last
	recordAll(l, clock, steps...)
	for _, c := range []struct {
		since int64
		want  []string
	}{
		{0, []string{"e0", "e1", "e2", "e3", "e4"}},
		{-5, []string{"e0", "e1", "e2", "e3", "e4"}},
		{300, []string{"e0", "e2", "e3", "e4"}},
		{501, []string{"e0"}},
		{1001, nil},
	} {
		var got []string
		n, err := Read(buf, c.since, func(o Observation) {
			var msg string
			_, _ = fmt.Sscanf(o.Text, "*errors.errorString: %s", &msg)
			got = append(got, msg)
		})
		require.NoError(t, err)
		require.Equal(t, len(c.want), n)
		require.Equal(t, c.want, got, "since %d", c.since)
	}
}

func TestHasErrors(t *testing.T) {
	buf := newBuf(64)
	require.False(t, HasErrors(nil))
	require.False(t, HasErrors(buf))
	require.False(t, HasErrors(buf[:3]))
	put32(buf, 0, 30)
	require.True(t, HasErrors(buf))
	require.True(t, HasErrors(buf[:4]), "Agrona's check: capacity >= 4 and a first length > 0")
	require.False(t, HasErrors(buf[8:]))
	put32(buf, 0, -1)
	require.False(t, HasErrors(buf))
}

// Corrupt records stop the walk with ErrCorrupt after the good ones; the
// walk never reads outside the buffer.
func TestReadCorruptRecords(t *testing.T) {
	good := func() ([]byte, int) {
		buf := newBuf(512)
		l := mustLog(t, buf)
		require.True(t, l.Record(errors.New("fine")))
		return buf, l.next
	}
	for _, c := range []struct {
		name   string
		length int32
		at     func(next int) int // where the bad length goes
		before int                // records delivered before the error
	}{
		{"length 1 first", 1, func(int) int { return 0 }, 0},
		{"length 23 first", 23, func(int) int { return 0 }, 0},
		{"negative first", -24, func(int) int { return 0 }, 0},
		{"past the end first", 513, func(int) int { return 0 }, 0},
		{"huge first", 1<<31 - 1, func(int) int { return 0 }, 0},
		{"length 7 second", 7, func(n int) int { return n }, 1},
		{"past the end second", 0, func(n int) int { return n }, 1}, // length set below
		{"negative second", -1, func(n int) int { return n }, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			buf, next := good()
			at := c.at(next)
			length := c.length
			if length == 0 {
				length = int32(len(buf) - at + 1)
			}
			put32(buf, at, length)
			delivered := 0
			n, err := Read(buf, 0, func(Observation) { delivered++ })
			require.ErrorIs(t, err, ErrCorrupt)
			require.Equal(t, c.before, n)
			require.Equal(t, c.before, delivered)
			_, err = New(buf)
			require.ErrorIs(t, err, ErrCorrupt)
		})
	}
}

// A record that exactly fills the buffer, and a buffer too short for a
// header after the last record, end the walk cleanly.
func TestReadEndsAtTheEdge(t *testing.T) {
	buf := newBuf(64)
	put32(buf, 0, 30) // record 0: 30 bytes, next at 32
	put32(buf, 32, 32)
	obs := readAll(t, buf)
	require.Len(t, obs, 2)
	require.Len(t, obs[1].Text, 8)

	buf = newBuf(60)
	put32(buf, 0, 40) // next at 40: 20 bytes left, no header fits
	put32(buf, 40, 3) // never looked at
	require.Len(t, readAll(t, buf), 1)
}

// since 0 or less delivers every record, as documented, including ones
// whose last time is before 1970 (a writer's clock, or a foreign writer):
// dutystat reads with since 0 and must not hide them.
func TestReadSinceZeroOrLessDeliversAll(t *testing.T) {
	buf := newBuf(1 << 12)
	clock := newClock(-5000)
	l := mustLog(t, buf, WithClock(clock))
	require.True(t, l.Record(errors.New("before 1970")))
	clock.Set(100)
	require.True(t, l.Record(errors.New("after 1970")))
	for _, since := range []int64{0, -1, math.MinInt64} {
		n, err := Read(buf, since, func(Observation) {})
		require.NoError(t, err)
		require.Equal(t, 2, n, "since %d", since)
	}
	n, err := Read(buf, 1, func(Observation) {})
	require.NoError(t, err)
	require.Equal(t, 1, n)
}
