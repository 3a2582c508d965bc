package msg

import "testing"

func BenchmarkExecutionReportRoundTrip(b *testing.B) {
	r := ExecutionReport{OrderID: 5, ExecID: 6, Instrument: 2, ExecType: PartialFill, Side: Buy,
		OrderQty: 100, LastPx: 10_000, LastQty: 30, LeavesQty: 70, CumQty: 30, OriginNanos: 123_456}
	buf := make([]byte, ExecutionReportLen)
	var out ExecutionReport
	b.ReportAllocs()
	for b.Loop() {
		r.Encode(buf)
		if err := out.Decode(buf); err != nil {
			b.Fatal(err)
		}
	}
}
