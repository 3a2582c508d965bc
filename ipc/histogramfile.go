package ipc

import (
	"context"
	"errors"
	"fmt"
	"github.com/dutyrt/duty/internal/ipcfile"
	"time"

	"github.com/dutyrt/duty/histogram"

	"github.com/dutyrt/duty/internal/mmapfile"
)

// HistogramSpec describes one histogram of a KindHistograms file.
type HistogramSpec struct {
	// Label names the histogram (at most histogram.MaxLabelLength bytes):
	// "tick-to-trade", "gateway.decode".
	Label string
	// Config is its HdrHistogram parameters.
	Config histogram.Config
}

// HistogramsFile is a KindHistograms file: one section holding histogram
// regions (package histogram) one after another, each 8-byte aligned,
// so that other processes (cmd/dutystat, an exporter) read the latency
// histograms of a process while it records them.
//
// The process that creates it (CreateHistograms) is the owner: it alone
// records, through Recorder(i) (one writer goroutine per histogram), and
// heartbeats the file (File.Heartbeat). Any other process opens it with
// OpenHistograms, which maps it read-only (PROT_READ); Recorder returns nil
// there. Reader(i) works in both.
//
// The HistogramsFile holds one reference to its File; Close releases it.
// Recorders and Readers alias the mapping: none of them may be used after
// Close (when that was the last reference, the memory is unmapped and the
// access faults). Stop the agents that record first.
type HistogramsFile struct {
	*File
	recorders []*histogram.Recorder // owner only
	readers   []*histogram.Reader
	readOnly  bool
}

// histogramsReadyWait is how long after a file's creation OpenHistograms
// waits for every histogram header (the creator writes them right after
// Create): a histograms file older than that without them is corrupt.
const histogramsReadyWait = 5 * time.Second

// CreateHistograms creates dir/name (see Create, which reads opts) as a
// KindHistograms file holding one histogram per spec, in order, and returns
// it with a Recorder for each. specs must not be empty and every spec must
// be valid (histogram.Size, histogram.MaxLabelLength); otherwise the error
// wraps ErrArgument and the histogram package's error.
//
// The owner heartbeats the file as any owner does (File.Heartbeat), and
// a restarted owner creates a new file (WithReplaceStale replaces the old
// one once its owner is provably dead).
func CreateHistograms(dir, name string, specs []HistogramSpec, opts ...Option) (*HistogramsFile, error) {
	if len(specs) == 0 {
		return nil, fmt.Errorf("%w: no histograms", ErrArgument)
	}
	sizes := make([]int, len(specs))
	total := 0
	for i, s := range specs {
		n, err := histogram.Size(s.Config)
		if err == nil && len(s.Label) > histogram.MaxLabelLength {
			err = fmt.Errorf("%w: label of %d bytes, want at most %d", histogram.ErrArgument, len(s.Label), histogram.MaxLabelLength)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: histogram %d (%q): %w", ErrArgument, i, s.Label, err)
		}
		sizes[i] = n
		total += n
	}
	f, err := create(dir, name, KindHistograms, []int{total}, opts...)
	if err != nil {
		return nil, err
	}
	hf := &HistogramsFile{File: f}
	section, off := mustSection(f), 0
	for i, s := range specs {
		r, err := histogram.NewRecorder(section[off:off+sizes[i]], s.Config, s.Label)
		if err != nil {
			// A fresh, page-aligned, zero section cannot be refused: leave
			// nothing behind if it is.
			return nil, errors.Join(fmt.Errorf("ipc: %s: histogram %d: %w", f.Path(), i, err), f.Remove(), f.Close())
		}
		hf.recorders = append(hf.recorders, r)
		off += sizes[i]
	}
	if hf.readers, err = histogramReaders(section); err != nil {
		return nil, errors.Join(fmt.Errorf("ipc: %s: %w", f.Path(), err), f.Remove(), f.Close())
	}
	return hf, nil
}

// OpenHistograms opens the KindHistograms file at path read-only (see
// OpenReadOnly, which reads opts) and returns it with a Reader for each of
// its histograms; Recorder returns nil. A file of another kind gives
// ErrKind. The histogram headers are checked (histogram.NewReader) and
// the regions must fill the section exactly, otherwise the error wraps
// ErrCorrupt (and histogram.ErrCorrupt where a header is bad). A file
// created so recently that its creator may still be writing the headers is
// waited for, polling every 1 ms, up to 5 s after its creation
// or until ctx ends (ErrNotReady, wrapping ctx's error).
func OpenHistograms(ctx context.Context, path string, opts ...Option) (*HistogramsFile, error) {
	f, err := OpenReadOnly(ctx, path, opts...)
	if err != nil {
		return nil, err
	}
	if f.Kind() != KindHistograms {
		_ = f.Close()
		return nil, fmt.Errorf("%w: %s has kind %d, want %d (histograms)", ErrKind, path, f.Kind(), KindHistograms)
	}
	c := newConfig(opts)
	var first time.Time // when this opener first found a header missing
	for {
		var readers []*histogram.Reader
		err := f.Guard(func() error {
			b, err := f.Section(0)
			if err == nil {
				readers, err = histogramReaders(b)
			}
			return err
		})
		if err == nil {
			return &HistogramsFile{File: f, readers: readers, readOnly: true}, nil
		}
		if !errors.Is(err, histogram.ErrNotReady) {
			return nil, errors.Join(fmt.Errorf("%w: %s: %w", ErrCorrupt, path, err), f.Close())
		}
		now := c.now()
		if first.IsZero() {
			first = now
		}
		// Bounded by the file's age and by this opener's own wait: a
		// creation time in the future must not make it wait for ever.
		age, waited := now.Sub(f.Created()), now.Sub(first)
		if hb, _ := f.heartbeatMillis(); age > histogramsReadyWait || waited > histogramsReadyWait || hb == ipcfile.HeartbeatClosed {
			return nil, errors.Join(fmt.Errorf("%w: %s: a histogram ipcfile.Header is missing (created %s ago, waited %s): %w",
				ErrCorrupt, path, age.Round(time.Millisecond), waited.Round(time.Millisecond), err), f.Close())
		}
		if werr := mmapfile.Wait(ctx, c.pollInterval); werr != nil {
			return nil, errors.Join(fmt.Errorf("%w: %s: histogram headers not written yet: %w", ErrNotReady, path, werr), f.Close())
		}
	}
}

// histogramReaders walks the regions of a histograms section: each
// header's config gives its length, and so where the next begins. The
// regions must fill the section exactly.
func histogramReaders(section []byte) ([]*histogram.Reader, error) {
	var readers []*histogram.Reader
	for off := 0; off < len(section); {
		r, err := histogram.NewReader(section[off:])
		if err != nil {
			return nil, fmt.Errorf("histogram %d at section offset %d: %w", len(readers), off, err)
		}
		readers = append(readers, r)
		off += r.Size()
	}
	if len(readers) == 0 {
		return nil, fmt.Errorf("%w: empty histograms section", histogram.ErrCorrupt)
	}
	return readers, nil
}

// Len returns the number of histograms in the file.
func (h *HistogramsFile) Len() int { return len(h.readers) }

// Recorder returns the Recorder of histogram i (0..Len()-1, in the order of
// CreateHistograms's specs), or nil for a file opened with OpenHistograms
// or an i out of range. One goroutine records into each.
func (h *HistogramsFile) Recorder(i int) *histogram.Recorder {
	if i < 0 || i >= len(h.recorders) {
		return nil
	}
	return h.recorders[i]
}

// Reader returns a Reader of histogram i (0..Len()-1), or nil for an i out
// of range. Goroutines may share it, each snapshotting into its own
// histogram.Snapshot.
func (h *HistogramsFile) Reader(i int) *histogram.Reader {
	if i < 0 || i >= len(h.readers) {
		return nil
	}
	return h.readers[i]
}

// ReadOnly reports whether the file is mapped read-only (OpenHistograms).
func (h *HistogramsFile) isReadOnly() bool { return h.readOnly }
