package ipc

import (
	"testing"
	"time"

	"github.com/dutyrt/duty/ringbuf"
)

// BenchmarkRingWriteRead measures one 32-byte Write plus the Read that
// consumes it, on one goroutine, for a ring on the heap (baseline), a ring
// in a mapped /dev/shm file, and the file ring with each operation wrapped
// in File.Guard (the cost a guarded hot path would pay).
func BenchmarkRingWriteRead(b *testing.B) {
	const capacity = 64 << 10
	payload := make([]byte, 32)
	h := func(int32, []byte) {}
	run := func(b *testing.B, write func() error, read func() (int, error)) {
		b.ReportAllocs()
		for b.Loop() {
			if err := write(); err != nil {
				b.Fatal(err)
			}
			if _, err := read(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("heap", func(b *testing.B) {
		buf, err := ringbuf.Allocate(capacity)
		if err != nil {
			b.Fatal(err)
		}
		r, err := ringbuf.NewManyToOne(buf)
		if err != nil {
			b.Fatal(err)
		}
		run(b, func() error { return r.Write(testTypeID, payload) }, func() (int, error) { return r.Read(h, ringbuf.NoLimit) })
	})
	b.Run("file", func(b *testing.B) {
		r, err := CreateRing(testDir(b), "bench", capacity)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		run(b, func() error { return r.Write(testTypeID, payload) }, func() (int, error) { return r.Read(h, ringbuf.NoLimit) })
	})
	b.Run("file-guarded", func(b *testing.B) {
		r, err := CreateRing(testDir(b), "bench", capacity)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		f := r.File
		write := func() error { return r.Write(testTypeID, payload) }
		var n int
		read := func() error {
			var err error
			n, err = r.Read(h, ringbuf.NoLimit)
			return err
		}
		run(b, func() error { return f.Guard(write) }, func() (int, error) { return n, f.Guard(read) })
	})
}

// BenchmarkHeartbeat measures the owner's Heartbeat (fstat size check plus
// a guarded release store) against a ring Write+Read as the baseline above.
func BenchmarkHeartbeat(b *testing.B) {
	f, err := create(testDir(b), "hb", kindUserMin, []int{8})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	now := time.Now().UnixMilli()
	b.ReportAllocs()
	for b.Loop() {
		if err := f.Heartbeat(now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpen measures Open+Close of a ring file (cold path: open, fstat,
// header snapshot mapping, validation, mapping).
func BenchmarkOpen(b *testing.B) {
	r, err := CreateRing(testDir(b), "open", 64<<10)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	ctx := ctxT(b)
	b.ReportAllocs()
	for b.Loop() {
		f, err := open(ctx, r.File.Path())
		if err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
