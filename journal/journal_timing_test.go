package journal

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"
)

// Appending records of 32 bytes and 1 KiB with no flush, against the same
// bytes (header and body) through a 64 KiB bufio.Writer over an os.File,
// and against copying them into memory (the limit). Retention keeps the
// journal at a few segments however large b.N is.
func BenchmarkAppend(b *testing.B) {
	for _, size := range []int{32, 1024} {
		b.Run(sizeName(size), func(b *testing.B) {
			j, err := Open(b.TempDir(), Options{RetainBytes: 2 * DefaultSegmentSize, Logger: quiet})
			if err != nil {
				b.Fatal(err)
			}
			defer j.Close()
			body := make([]byte, size)
			b.SetBytes(int64(RecordHeaderLength + size))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				c, err := j.Claim(1, 1, size)
				if err != nil {
					b.Fatal(err)
				}
				copy(c.Body, body)
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
			rec := make([]byte, align(int64(RecordHeaderLength+size)))
			b.SetBytes(int64(RecordHeaderLength + size))
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
			rec := make([]byte, align(int64(RecordHeaderLength+size)))
			b.SetBytes(int64(RecordHeaderLength + size))
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
	b.SetBytes(RecordHeaderLength + 32)
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
