package main

import (
	"testing"
	"time"
)

// BenchmarkVariant runs each variant for real (two threads, the flags'
// default placement) with b.N messages or round trips in one repetition,
// and reports ns per message from the variant's own timing.
func BenchmarkVariant(b *testing.B) {
	place := placement{lock: true, cpus: firstCPUs(2)}
	for _, w := range registry {
		for _, v := range w.variants {
			b.Run(w.name+"/"+v.name, func(b *testing.B) {
				cfg := &runConfig{n: max(b.N, 1), place: place, timeout: 5 * time.Minute, corruptAt: -1}
				if v.goroutines {
					cfg.place = placement{}
				}
				if w.kind == kindLatency {
					cfg.lat = make([]int64, cfg.n)
				}
				b.ReportAllocs()
				elapsed, err := v.run(cfg)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(elapsed.Nanoseconds())/float64(cfg.n), "ns/msg")
			})
		}
	}
}
