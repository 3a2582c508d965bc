package ipc_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/dutyrt/duty/histogram"
	"github.com/dutyrt/duty/ipc"
)

// Latency histograms in a shared file: the owner's agents record, another
// process (here the same one, through a read-only mapping) reads every
// histogram of the file by path.
func ExampleCreateHistograms() {
	dir, err := os.MkdirTemp("", "duty-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	ns := histogram.Config{Lowest: 1, Highest: 10_000_000_000, SignificantFigures: 3}
	owner, err := ipc.CreateHistograms(dir, "latency", []ipc.HistogramSpec{
		{Label: "tick-to-order", Config: ns},
		{Label: "tick-to-trade", Config: ns},
	})
	if err != nil {
		panic(err)
	}
	defer owner.Close()
	for i := range int64(100) { // each from its agent's duty cycle
		owner.Recorder(0).Record(2_000 + 10*i)
		owner.Recorder(1).Record(15_000 + 100*i)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	view, err := ipc.OpenHistograms(ctx, owner.File.Path())
	if err != nil {
		panic(err)
	}
	defer view.Close()
	var s histogram.Snapshot
	for i := range view.Len() {
		if err := view.Reader(i).Snapshot(&s); err != nil {
			panic(err)
		}
		fmt.Printf("%s: n=%d p50=%d p99=%d max=%d\n", s.Label, s.TotalCount, s.ValueAtQuantile(50), s.ValueAtQuantile(99), s.Max)
	}
	// Output:
	// tick-to-order: n=100 p50=2491 p99=2981 max=2990
	// tick-to-trade: n=100 p50=19903 p99=24815 max=24900
}
