package idle

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseAccepts(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"noop", "noop"},
		{"spin", "spin"},
		{"spin:1", "spin"},
		{"spin:64", "spin:64"},
		{"spin:65536", "spin:65536"},
		{" yield\n", "yield"},
		{"sleep-ns", "sleep-ns:1000"},
		{"sleep-ns:2000", "sleep-ns:2000"},
		{"sleep-ns:2us", "sleep-ns:2000"},
		{"sleep-ns:0", "sleep-ns:0"},
		{"sleep-ms", "sleep-ms:1"},
		{"sleep-ms:20", "sleep-ms:20"},
		{"backoff", "backoff:10:5:1µs:1ms"},
		{"backoff:10:5:1us:1ms", "backoff:10:5:1µs:1ms"},
		{"backoff:100:0:1000:20000000", "backoff:100:0:1µs:20ms"},
	} {
		s, err := Parse(tc.spec)
		require.NoError(t, err, tc.spec)
		require.Equal(t, tc.want, s.String(), tc.spec)
		again, err := Parse(s.String())
		require.NoError(t, err)
		require.Equal(t, s.String(), again.String(), "round trip of %q", tc.spec)
	}
	s, err := Parse("backoff:1:2:3us:4ms")
	require.NoError(t, err)
	require.Equal(t, BackoffConfig{MaxSpins: 1, MaxYields: 2, MinPark: 3 * time.Microsecond, MaxPark: 4 * time.Millisecond},
		s.(*backoffStrategy).config())
}

func TestParseReturnsFreshInstances(t *testing.T) {
	a, err := Parse("backoff")
	require.NoError(t, err)
	b, err := Parse("backoff")
	require.NoError(t, err)
	require.NotSame(t, a, b)
}

func TestParseRejects(t *testing.T) {
	for _, spec := range []string{
		"", "Spin", "busy", "noop:", "yield:x",
		"spin:", "spin:0", "spin:-1", "spin:x", "spin:1:2", "spin:65537", "spin:99999999999999999999",
		"sleep-ns:", "sleep-ns:-1", "sleep-ns:1:2", "sleep-ns:abc",
		"sleep-ms:1.5", "sleep-ms:-1", "sleep-ms:99999999999999999",
		"backoff:", "backoff:1:2:3", "backoff:a:5:1us:1ms", "backoff:10:5:1us:1xs",
		"backoff:-1:5:1us:1ms", "backoff:10:5:2ms:1ms", "backoff:10:5:0:1ms",
		"controllable",
	} {
		_, err := Parse(spec)
		require.ErrorIs(t, err, ErrBadSpec, "spec %q", spec)
		require.Contains(t, err.Error(), "idle:")
	}
	_, err := Parse("fast")
	require.EqualError(t, err, `idle: bad strategy spec "fast": unknown strategy; want one of noop, spin, yield, sleep-ns, sleep-ms, backoff`)
}

// Strategy.String promises a spec that Parse turns back into an equivalent
// strategy, for strategies built by the constructors too.
func TestConstructedStrategiesRoundTripThroughParse(t *testing.T) {
	for _, s := range []Strategy{
		Sleeping(-time.Microsecond), // period <= 0: no sleep, like sleep-ns:0
		sleepingMillis(-1),          // no sleep, like sleep-ms:0
	} {
		again, err := Parse(s.String())
		require.NoError(t, err, "Parse(%q)", s.String())
		require.Equal(t, s.String(), again.String())
	}
}

// A period too long for a time.Duration is the longest one, not a wrapped
// (negative: no sleep at all) one.
func TestSleepingMillisSaturates(t *testing.T) {
	rec := record(t)
	s := sleepingMillis(math.MaxInt64/int(time.Millisecond) + 1)
	s.IdleOnce()
	require.Equal(t, "park "+(time.Duration(math.MaxInt64)/time.Millisecond*time.Millisecond).String(), rec.take())
	_, err := Parse(s.String())
	require.NoError(t, err, "Parse(%q)", s.String())
}
