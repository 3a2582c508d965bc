package layoutdoc

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// selfChecked are the packages whose rows of docs/layouts.md their own
// tests check with Check (their layout constants are unexported, in part or
// all, so only the package can name them).
var selfChecked = map[string]bool{
	"broadcast":   true,
	"counters":    true,
	"errlog":      true,
	"histogram":   true,
	"ipc":         true,
	"mailbox":     true,
	"natsbridge":  true,
	"publication": true,
	"ringbuf":     true,
}

// TestEveryRowIsChecked: every row of docs/layouts.md belongs to a package
// whose own test checks it.
func TestEveryRowIsChecked(t *testing.T) {
	rows := Rows(t)
	require.NotEmpty(t, rows)
	for name := range rows {
		require.True(t, selfChecked[strings.SplitN(name, ".", 2)[0]],
			"docs/layouts.md lists %s, whose package does not check its rows", name)
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
	for name, v := range Rows(t) {
		if after, ok := strings.CutPrefix(name, "ringbuf."); ok {
			rows[after] = v
		}
	}
	require.NotEmpty(t, rows)
	Check(t, "ringbuf", rows)
	Check(t, "ringbuf", constantsOf(t, "ringbuf")) // names with their prefix

	wrong := maps.Clone(rows)
	wrong["TrailerLength"]++
	delete(wrong, "HeaderLength")
	wrong["Extra"] = 1
	r := &recorder{TB: t}
	Check(r, "ringbuf", wrong)
	require.Len(t, r.errs, 3, "%q", r.errs)
}

func constantsOf(t *testing.T, pkg string) map[string]int64 {
	m := map[string]int64{}
	for name, v := range Rows(t) {
		if strings.HasPrefix(name, pkg+".") {
			m[name] = v
		}
	}
	return m
}
