package errlog_test

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/errlog"
)

// A storm of the same error takes one record; another error takes another.
// The reader (here over the same slice; in practice another process
// mapping the same file) sees each once, with its count.
func Example() {
	buf := make([]byte, 64<<10)                               // a section of a shared file, in practice
	clk := clock.NewManual(time.UnixMilli(1_700_000_000_000)) // a test clock; clock.System by default
	log, err := errlog.New(buf, errlog.WithClock(clk))
	if err != nil {
		panic(err)
	}
	for i := range 1000 {
		err := fmt.Errorf("send order: %w", errors.New("connection reset"))
		if i%100 == 0 {
			err = errors.New("risk limit reached")
		}
		log.Record(err)
		clk.Advance(time.Millisecond)
	}

	n, err := errlog.Read(buf, 0, func(o errlog.Observation) {
		first, _, _ := strings.Cut(o.Text, "\n")
		fmt.Printf("%d x %s (%d ms)\n", o.Count, first, o.Last.Sub(o.First).Milliseconds())
	})
	fmt.Println(n, err)
	// Output:
	// 10 x *errors.errorString: risk limit reached (900 ms)
	// 990 x *fmt.wrapError: send order: connection reset (998 ms)
	// 2 <nil>
}

// Handler adapts a Log to a runner's error handler
// (runner.WithErrorHandler); errors that do not fit go to the fallback.
func ExampleHandler() {
	buf := make([]byte, 4096)
	log, _ := errlog.New(buf)
	h := errlog.Handler(log, func(err error) { fmt.Println("log full:", err.Error()[:16]) })
	for i := range 3 {
		h(fmt.Errorf("distinct error %d%s", i, strings.Repeat(".", 1500))) // room for one
	}
	fmt.Println(errlog.HasErrors(buf))
	// Output:
	// log full: distinct error 1
	// log full: distinct error 2
	// true
}

// Read's since filters on the last observation time: a monitor polls for
// what changed since its previous look.
func ExampleRead() {
	buf := make([]byte, 4096)
	clk := clock.NewManual(time.UnixMilli(1000))
	log, _ := errlog.New(buf, errlog.WithClock(clk))
	for _, e := range []struct {
		at  int64
		msg string
	}{{1000, "a"}, {2000, "b"}, {3000, "a"}} {
		clk.SetWall(time.UnixMilli(e.at))
		log.Record(errors.New(e.msg))
	}
	_, _ = errlog.Read(buf, 2500, func(o errlog.Observation) {
		first, _, _ := strings.Cut(o.Text, "\n")
		fmt.Println(first, o.Count, o.First.UnixMilli(), o.Last.UnixMilli())
	})
	// Output:
	// *errors.errorString: a 2 1000 3000
}
