package layoutdoc

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/ringbuf"
)

// constants is every number docs/layouts.md states, from the code.
var constants = map[string]int64{
	"ringbuf.TrailerLength":            ringbuf.TrailerLength,
	"ringbuf.TailPositionOffset":       ringbuf.TailPositionOffset,
	"ringbuf.HeadCachePositionOffset":  ringbuf.HeadCachePositionOffset,
	"ringbuf.HeadPositionOffset":       ringbuf.HeadPositionOffset,
	"ringbuf.CorrelationCounterOffset": ringbuf.CorrelationCounterOffset,
	"ringbuf.ConsumerHeartbeatOffset":  ringbuf.ConsumerHeartbeatOffset,
	"ringbuf.HeaderLength":             ringbuf.HeaderLength,
	"ringbuf.LengthOffset":             ringbuf.LengthOffset,
	"ringbuf.TypeOffset":               ringbuf.TypeOffset,
	"ringbuf.RecordAlignment":          ringbuf.RecordAlignment,
	"ringbuf.PaddingTypeID":            int64(ringbuf.PaddingTypeID),
	"ringbuf.MinCapacityOneToOne":      ringbuf.MinCapacityOneToOne,
	"ringbuf.MinCapacityManyToOne":     ringbuf.MinCapacityManyToOne,
}

// selfChecked are the packages whose rows their own tests check with Check
// (their layout constants are unexported); this test skips them.
var selfChecked = map[string]bool{
	"counters":    true,
	"broadcast":   true,
	"errlog":      true,
	"histogram":   true,
	"ipc":         true,
	"mailbox":     true,
	"publication": true,
}

func TestLayoutsPageMatchesTheCode(t *testing.T) {
	seen := map[string]bool{}
	for name, got := range Rows(t) {
		if selfChecked[strings.SplitN(name, ".", 2)[0]] {
			continue
		}
		want, ok := constants[name]
		require.True(t, ok, "docs/layouts.md lists %s, which this test does not know", name)
		require.Equal(t, want, got, "docs/layouts.md: %s", name)
		seen[name] = true
	}
	for name := range constants {
		require.True(t, seen[name], "docs/layouts.md does not list %s", name)
	}
}

// recorder is a testing.TB that records Check's failures instead of
// failing the test.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestCheck: Check passes on a package's exact rows and fails on a wrong
// value, a missing name and an extra one.
func TestCheck(t *testing.T) {
	rows := map[string]int64{}
	for name, v := range constants {
		if after, ok := strings.CutPrefix(name, "ringbuf."); ok {
			rows[after] = v
		}
	}
	require.NotEmpty(t, rows)
	Check(t, "ringbuf", rows)
	Check(t, "ringbuf", constantsOf("ringbuf")) // names with their prefix

	wrong := maps.Clone(rows)
	wrong["TrailerLength"]++
	delete(wrong, "HeaderLength")
	wrong["Extra"] = 1
	r := &recorder{TB: t}
	Check(r, "ringbuf", wrong)
	require.Len(t, r.errs, 3, "%q", r.errs)
}

func constantsOf(pkg string) map[string]int64 {
	m := map[string]int64{}
	for name, v := range constants {
		if strings.HasPrefix(name, pkg+".") {
			m[name] = v
		}
	}
	return m
}
