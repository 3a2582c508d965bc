package journal

import (
	"bufio"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/dutyrt/duty/internal/journalfile"
)

// Appending records of 32 bytes and 1 KiB with no flush, against the same
// bytes (header and body) through a 64 KiB bufio.Writer over an os.File,
// and against copying them into memory (the limit). Retention keeps the
// journal at a few segments however large b.N is.
func BenchmarkAppend(b *testing.B) {
	for _, size := range []int{32, 1024} {
		b.Run(sizeName(size), func(b *testing.B) {
			j, err := Open(b.TempDir(), Options{RetainBytes: 2 * journalfile.DefaultSegmentSize, Logger: quiet})
			if err != nil {
				b.Fatal(err)
			}
			defer j.Close()
			body := make([]byte, size)
			b.SetBytes(int64(journalfile.RecordHeaderLength + size))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				c, err := j.Claim(1, 1, size)
				if err != nil {
					b.Fatal(err)
				}
				copy(c.Body(), body)
				if err := j.Commit(); err != nil {
					b.Fatal(err)
				}
				if i&0xffff == 0 {
					if _, err := j.ApplyRetention(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

func BenchmarkBufioBaseline(b *testing.B) {
	for _, size := range []int{32, 1024} {
		b.Run(sizeName(size), func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "bufio"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			w := bufio.NewWriterSize(f, 64<<10)
			rec := make([]byte, journalfile.Align(int64(journalfile.RecordHeaderLength+size)))
			b.SetBytes(int64(journalfile.RecordHeaderLength + size))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := w.Write(rec); err != nil {
					b.Fatal(err)
				}
				if i&0xffff == 0xffff { // keep the file small
					if err := w.Flush(); err != nil {
						b.Fatal(err)
					}
					if _, err := f.Seek(0, 0); err != nil {
						b.Fatal(err)
					}
				}
			}
			if err := w.Flush(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

func BenchmarkMemmoveBaseline(b *testing.B) {
	for _, size := range []int{32, 1024} {
		b.Run(sizeName(size), func(b *testing.B) {
			dst := make([]byte, 64<<20)
			rec := make([]byte, journalfile.Align(int64(journalfile.RecordHeaderLength+size)))
			b.SetBytes(int64(journalfile.RecordHeaderLength + size))
			off := 0
			for b.Loop() {
				if off+len(rec) > len(dst) {
					off = 0
				}
				off += copy(dst[off:], rec)
			}
		})
	}
}

// Reading back with a Tailer (CRC checked), records of 32 bytes.
func BenchmarkTailerRead(b *testing.B) {
	j, err := Open(b.TempDir(), Options{Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	const n = 1 << 16
	body := make([]byte, 32)
	for range n {
		if _, _, err := j.Append(1, 1, body); err != nil {
			b.Fatal(err)
		}
	}
	tl, err := j.NewTailer()
	if err != nil {
		b.Fatal(err)
	}
	defer tl.Close()
	b.SetBytes(journalfile.RecordHeaderLength + 32)
	b.ReportAllocs()
	for b.Loop() {
		_, ok, err := tl.Next()
		if err != nil {
			b.Fatal(err)
		}
		if !ok {
			if err := tl.SeekStart(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func sizeName(n int) string {
	if n >= 1024 {
		return "1KiB"
	}
	return "32B"
}

// Append-to-tailer latency: the writer stamps each 32-byte record with
// the time it claims it, a Tailer on another goroutine spinning at the
// tail takes the difference when it reads it; the writer sends the next
// record once the last one was read (one in flight). Reports the one-way
// latency's p50 and p99 in ns.
func BenchmarkAppendToTailer(b *testing.B) {
	j, err := Open(b.TempDir(), Options{Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	tl, err := j.NewTailer()
	if err != nil {
		b.Fatal(err)
	}
	hist := hdrhistogram.New(1, int64(time.Second), 3)
	var read atomic.Int64
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		defer tl.Close()
		for {
			r, ok, err := tl.Next()
			if err != nil {
				done <- err
				return
			}
			if !ok {
				select {
				case <-stop:
					done <- nil
					return
				default:
				}
				continue
			}
			_ = hist.RecordValue(max(time.Now().UnixNano()-int64(binary.LittleEndian.Uint64(r.Body)), 1))
			read.Add(1)
		}
	}()
	sent := int64(0)
	for b.Loop() {
		c, err := j.Claim(1, 1, 32)
		if err != nil {
			b.Fatal(err)
		}
		binary.LittleEndian.PutUint64(c.Body(), uint64(time.Now().UnixNano()))
		if err := j.Commit(); err != nil {
			b.Fatal(err)
		}
		sent++
		for read.Load() < sent {
			runtime.Gosched()
		}
	}
	close(stop)
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(hist.ValueAtQuantile(50)), "p50-ns")
	b.ReportMetric(float64(hist.ValueAtQuantile(99)), "p99-ns")
}
