package errlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
)

// The cost of recording an error already in the log: a storm.
func BenchmarkRecordRepeated(b *testing.B) {
	for _, c := range []struct {
		name string
		err  error
	}{
		{"plain", errors.New("connection reset")},
		{"wrapped3", fmt.Errorf("send: %w", fmt.Errorf("write: %w", errors.New("connection reset")))},
		{"panicStack", &panicked{"boom", panicSiteA(1)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			l, _ := New(newBuf(1 << 16))
			b.ReportAllocs()
			for b.Loop() {
				l.Record(c.err)
			}
		})
	}
}

// The same storm from every goroutine: the mutex is contended.
func BenchmarkRecordRepeatedParallel(b *testing.B) {
	l, _ := New(newBuf(1 << 16))
	err := errors.New("connection reset")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Record(err)
		}
	})
}

// Among many distinct observations: the hash keeps the lookup flat.
func BenchmarkRecordRepeatedAmong1000(b *testing.B) {
	l, _ := New(newBuf(1 << 20))
	errs := make([]error, 1000)
	for i := range errs {
		errs[i] = fmt.Errorf("error %d", i)
	}
	for _, e := range errs {
		l.Record(e)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		l.Record(errs[i%len(errs)])
		i++
	}
}

// A new observation: text encoding and the append (a fresh log each time
// the buffer fills: one refused Record in about 3,000).
func BenchmarkRecordNew(b *testing.B) {
	buf := newBuf(1 << 20)
	l, _ := New(buf)
	errs := make([]error, 1<<14)
	for i := range errs {
		errs[i] = fmt.Errorf("error %d", i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if !l.Record(errs[i%len(errs)]) || i == len(errs) {
			b.StopTimer()
			clear(buf)
			l, _ = New(buf)
			i = 0
			b.StartTimer()
		}
		i++
	}
}

// Reading a log of 100 observations (one string each).
func BenchmarkRead100(b *testing.B) {
	buf := newBuf(1 << 16)
	l, _ := New(buf)
	for i := range 100 {
		l.Record(fmt.Errorf("error %d", i))
	}
	b.ReportAllocs()
	for b.Loop() {
		n, _ := Read(buf, 0, func(Observation) {})
		if n != 100 {
			b.Fatal(n)
		}
	}
}

// Baseline, in the same run: what runner's default handler does with each
// error instead (slog at level Error, here into a text handler writing to
// io.Discard).
func BenchmarkBaselineSlogDiscard(b *testing.B) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	err := errors.New("connection reset")
	b.ReportAllocs()
	for b.Loop() {
		logger.LogAttrs(context.Background(), slog.LevelError, "duty: agent error", slog.String("role", "x"), slog.Any("err", err))
	}
}
