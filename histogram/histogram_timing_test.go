package histogram

import "testing"

// BenchmarkRecord: one value per operation, spread over the buckets of a
// nanosecond latency histogram.
func BenchmarkRecord(b *testing.B) {
	w, _ := newRecorder(b, ns, "bench")
	v := int64(1)
	for b.Loop() {
		w.Record(v)
		if v = v*3 + 1; v > 1<<34 {
			v = 1
		}
	}
}

// BenchmarkSnapshot: a snapshot of a nanosecond latency histogram into a
// grown Snapshot, then its p99.
func BenchmarkSnapshot(b *testing.B) {
	w, region := newRecorder(b, ns, "bench")
	for v := int64(1); v < 1<<34; v = v*3 + 1 {
		w.Record(v)
	}
	rd := newReader(b, region)
	var s Snapshot
	for b.Loop() {
		if err := rd.Snapshot(&s); err != nil {
			b.Fatal(err)
		}
		_ = s.ValueAtQuantile(99)
	}
}
