package histogram_test

import (
	"fmt"

	"github.com/dutyrt/duty/histogram"
)

// An agent records latencies into a histogram; a reader (here in the same
// process; normally cmd/dutystat over a shared file, see
// ipc.CreateHistograms) takes snapshots and reports the interval between
// two of them.
func Example() {
	cfg := histogram.Config{Lowest: 1, Highest: 10_000_000_000, SignificantFigures: 3} // 1 ns to 10 s
	region, err := histogram.NewRegion(cfg)
	if err != nil {
		panic(err)
	}
	rec, err := histogram.NewRecorder(region, cfg, "tick-to-trade")
	if err != nil {
		panic(err)
	}
	rd, err := histogram.NewReader(region)
	if err != nil {
		panic(err)
	}

	for i := range int64(1000) { // the agent's duty cycle
		rec.Record(1000 + i)
	}
	var before, now histogram.Snapshot
	if err := rd.Snapshot(&before); err != nil {
		panic(err)
	}
	for range 10 {
		rec.Record(50_000)
	}
	rec.Record(20_000_000_000) // beyond Highest: clamped

	if err := rd.Snapshot(&now); err != nil {
		panic(err)
	}
	fmt.Printf("%s: %d values, p50 %d, p99.9 %d, max %d\n", now.Label, now.TotalCount,
		now.ValueAtQuantile(50), now.ValueAtQuantile(99.9), now.Max)
	if err := now.Sub(&before); err != nil { // now becomes the interval
		panic(err)
	}
	fmt.Printf("interval: %d values (%d clamped), p50 %d\n", now.TotalCount, now.Clamped, now.ValueAtQuantile(50))
	// Output:
	// tick-to-trade: 1011 values, p50 1505, p99.9 50015, max 10000000000
	// interval: 11 values (1 clamped), p50 50015
}
