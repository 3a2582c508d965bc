package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/errlog"
	"github.com/dutyrt/duty/histogram"
	"github.com/dutyrt/duty/ipc"
)

// Exit statuses.
const (
	exitOK      = 0
	exitDir     = 1 // the directory cannot be read
	exitUsage   = 2 // bad flags
	tempPrefix  = ".duty-creating-"
	openTimeout = 100 * time.Millisecond // for a file still being created
)

// options are the parsed flags.
type options struct {
	dir      string
	watch    bool
	interval time.Duration
	window   time.Duration
	frames   int
	json     bool
	since    time.Duration
	serve    string // -serve ADDR: the Prometheus exporter
	counters bool   // -counters: -watch prints every counter
}

// env is what run needs from the outside world; tests replace it.
type env struct {
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
	// afterList runs after the directory is listed, before any file is
	// opened (tests remove a file there to make it vanish).
	afterList func()
}

func defaultEnv() env {
	return env{now: time.Now, sleep: sleepCtx, afterList: func() {}}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// run is the command: it parses args, samples and prints until done, and
// returns the exit status.
func run(ctx context.Context, stdout, stderr io.Writer, args []string) int {
	return runEnv(ctx, stdout, stderr, args, defaultEnv())
}

func parseFlags(stderr io.Writer, args []string) (options, error) {
	fl := flag.NewFlagSet("dutystat", flag.ContinueOnError)
	fl.SetOutput(stderr)
	var o options
	fl.StringVar(&o.dir, "dir", ipc.DefaultDir(), "directory of the duty files")
	fl.BoolVar(&o.watch, "watch", false, "print again every -interval until interrupted")
	fl.DurationVar(&o.interval, "interval", time.Second, "refresh interval with -watch")
	fl.DurationVar(&o.window, "window", 200*time.Millisecond, "time between the two samples of the first frame's rates (0: no rates)")
	fl.IntVar(&o.frames, "n", 0, "with -watch, stop after this many frames (0: until interrupted)")
	fl.BoolVar(&o.json, "json", false, "print one JSON object per frame")
	fl.DurationVar(&o.since, "since", 0, "show only the errors of error logs last observed within this time before each sample (0: all)")
	fl.BoolVar(&o.counters, "counters", false, "with -watch, print every counter of every file (the per-counter list), not one row per mailbox and runner")
	fl.StringVar(&o.serve, "serve", "", "serve the directory's counters and histograms on http://ADDR/metrics in the Prometheus text format, until interrupted")
	fl.Usage = func() {
		fmt.Fprintln(fl.Output(), "usage: dutystat [-dir DIR] [-watch [-counters]] [-interval 1s] [-window 200ms] [-n N] [-json] [-since 10m] [-serve ADDR]")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fl.NArg() > 0:
		return o, fmt.Errorf("unexpected arguments: %q", fl.Args())
	case o.interval <= 0:
		return o, fmt.Errorf("-interval %s must be positive", o.interval)
	case o.window < 0:
		return o, fmt.Errorf("-window %s must not be negative", o.window)
	case o.frames < 0:
		return o, fmt.Errorf("-n %d must not be negative", o.frames)
	case o.since < 0:
		return o, fmt.Errorf("-since %s must not be negative", o.since)
	}
	return o, nil
}

func runEnv(ctx context.Context, stdout, stderr io.Writer, args []string, e env) int {
	o, err := parseFlags(stderr, args)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "dutystat:", err)
		}
		return exitUsage
	}
	if o.serve != "" {
		err := serve(ctx, o.serve, o.dir, e, stderr, func(a net.Addr) {
			fmt.Fprintf(stdout, "dutystat: serving %s: live page http://%s/ , Prometheus http://%s/metrics\n", o.dir, a, a)
		})
		if err != nil {
			fmt.Fprintln(stderr, "dutystat:", err)
			return exitDir
		}
		return exitOK
	}
	clear := o.watch && !o.json && isTerminal(stdout)
	var prev *frame
	if o.window > 0 {
		f, err := sample(o.dir, e, nil, o.since)
		if err != nil {
			fmt.Fprintln(stderr, "dutystat:", err)
			return exitDir
		}
		prev = &f
		if e.sleep(ctx, o.window) != nil {
			prev = nil // interrupted: print what there is, without rates
		}
	}
	for n := 1; ; n++ {
		f, err := sample(o.dir, e, prev, o.since)
		if err != nil {
			fmt.Fprintln(stderr, "dutystat:", err)
			return exitDir
		}
		if clear {
			io.WriteString(stdout, "\033[H\033[2J")
		}
		switch {
		case o.json:
			err = json.NewEncoder(stdout).Encode(f)
		case o.watch && !o.counters:
			err = printView(stdout, &f)
		default:
			err = printText(stdout, &f)
		}
		if err != nil {
			fmt.Fprintln(stderr, "dutystat:", err)
			return exitDir
		}
		prev = &f
		if !o.watch || (o.frames > 0 && n >= o.frames) || ctx.Err() != nil {
			return exitOK
		}
		if e.sleep(ctx, o.interval) != nil {
			return exitOK
		}
	}
}

// frame is one sample of a directory.
type frame struct {
	Dir  string    `json:"dir"`
	Time time.Time `json:"time"`
	// ErrorsSince is set with -since: error logs list only the errors last
	// observed at or after it.
	ErrorsSince *time.Time   `json:"errors_since,omitempty"`
	Files       []fileSample `json:"files"`
	// Journals are the journals in the directory and its subdirectories
	// (journal.go).
	Journals []journalSample `json:"journals,omitempty"`
}

// fileSample is what one file looked like. Error says why the rest is
// missing or incomplete.
type fileSample struct {
	Name           string            `json:"name"`
	Kind           string            `json:"kind,omitempty"`
	KindID         int32             `json:"kind_id,omitempty"`
	Size           int64             `json:"size"`
	OwnerPID       int               `json:"owner_pid,omitempty"`
	Owner          string            `json:"owner,omitempty"` // liveness state
	HeartbeatAgeMs *int64            `json:"heartbeat_age_ms,omitempty"`
	Capacity       int               `json:"capacity,omitempty"` // counters files: counter ids
	Counters       []counterSample   `json:"counters,omitempty"`
	Histograms     []histogramSample `json:"histograms,omitempty"`
	Errors         []errorSample     `json:"errors,omitempty"`           // error log files: the first maxErrors
	ErrorsNotShown int               `json:"errors_not_shown,omitempty"` // distinct errors past maxErrors
	Mailbox        *mailboxState     `json:"mailbox,omitempty"`          // mailbox files
	Error          string            `json:"error,omitempty"`

	at    time.Time
	ident fileIdent // which file this was (see rates)
}

// mailboxState is what a mailbox file says of itself (ipc.InspectMailbox):
// open, closed or consumer dead, and the messages a dead consumer left
// undelivered.
type mailboxState struct {
	State    string `json:"state"`
	Stranded int64  `json:"stranded_messages"`
}

// status is a file's STATUS: its error, what a dead consumer stranded in
// a mailbox, or ok.
func (s *fileSample) status() string {
	switch {
	case s.Error != "":
		return s.Error
	case s.Mailbox != nil && s.Mailbox.State == "consumer dead":
		return fmt.Sprintf("consumer dead: %d messages stranded", s.Mailbox.Stranded)
	case s.Mailbox != nil && s.Mailbox.State == "closed":
		return "closed"
	}
	return "ok"
}

// fileIdent tells a file from another one later created at the same path
// (a restarted owner, WithReplaceStale): its inode, its header's creation
// time and its owner process. Counter ids and registration ids start again
// in a new file, so a rate across two files would be nonsense.
type fileIdent struct {
	dev, ino   uint64
	created    int64
	pid        int
	ownerStart uint64
}

// counterSample is one allocated counter.
type counterSample struct {
	ID             int      `json:"id"`
	RegistrationID int64    `json:"registration_id"`
	TypeID         int32    `json:"type_id"`
	Type           string   `json:"type"`
	Label          string   `json:"label"`
	Key            string   `json:"key,omitempty"` // hex, trailing zero bytes dropped
	Kind           string   `json:"kind"`          // counter, gauge or timestamp (counters.KindOf)
	Value          int64    `json:"value"`
	AgeMs          *int64   `json:"age_ms,omitempty"` // a timestamp's age at the sample (epoch ms)
	RatePerSec     *float64 `json:"rate_per_sec"`     // a counter's; null for other kinds and without a previous sample of the same counter
}

// histogramSample is one histogram of a histograms file: every value
// recorded since it was created.
type histogramSample struct {
	Label       string       `json:"label"`
	Count       int64        `json:"count"`
	Min         int64        `json:"min"`
	Max         int64        `json:"max"`
	Mean        float64      `json:"mean"`
	Clamped     int64        `json:"clamped"` // values recorded at a bound of the range
	Percentiles []percentile `json:"percentiles"`

	// For the exporter and the live page: the non-empty buckets, the
	// exact values at the summary's percentiles, HdrHistogram's percentile
	// distribution, and when the recorder started.
	buckets      []histogramBucket
	exact        map[float64]int64
	distribution []percentile
	startMillis  int64
}

// valueAt is the exact value at percentile p, if read.
func (h *histogramSample) valueAt(p float64) int64 { return h.exact[p] }

// percentile is a value at a quantile, in percent (50, 90, 99, 99.9).
type percentile struct {
	Quantile float64 `json:"quantile"`
	Value    int64   `json:"value"`
}

// errorSample is one distinct error of an error log file.
type errorSample struct {
	Count int64    `json:"count"`
	First jsonTime `json:"first"` // null outside years 0-9999
	Last  jsonTime `json:"last"`  // null outside years 0-9999
	Text  string   `json:"text"`  // the whole encoded error: type, message, stack, causes
}

// jsonTime is a time read from a file, which another process wrote: as JSON
// an RFC 3339 time, or null for a year RFC 3339 cannot hold (0 to 9999),
// where time.Time's MarshalJSON fails, and with it the whole frame.
type jsonTime struct{ time.Time }

func (t jsonTime) MarshalJSON() ([]byte, error) {
	if y := t.Year(); y < 0 || y > 9999 {
		return []byte("null"), nil
	}
	return t.Time.MarshalJSON()
}

// sample lists dir and samples every file in it. Only an unreadable
// directory is an error; everything about a file goes in its Error.
// With since > 0, error logs list only the errors last observed within
// since before the sample's time.
func sample(dir string, e env, prev *frame, since time.Duration) (frame, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return frame{}, err
	}
	e.afterList()
	f := frame{Dir: dir, Time: e.now()}
	var sinceMs int64 // errlog.Read's: 0 for all
	if since > 0 {
		t := f.Time.Add(-since)
		f.ErrorsSince = &t
		if ms := t.UnixMilli(); ms > 0 { // before 1970: all, as errlog.Read's 0
			sinceMs = ms
		}
	}
	present := map[string]bool{}
	for _, de := range entries {
		if !de.Type().IsRegular() { // as ipc.Cleanup: no directories, symlinks, devices
			continue
		}
		present[de.Name()] = true
		f.Files = append(f.Files, sampleFile(filepath.Join(dir, de.Name()), e, sinceMs))
	}
	f.Journals = sampleJournals(dir, f.Time)
	if prev != nil {
		for _, p := range prev.Files {
			if !present[p.Name] && !strings.HasPrefix(p.Error, "vanished") {
				f.Files = append(f.Files, fileSample{Name: p.Name, Kind: p.Kind, KindID: p.KindID, Error: "vanished since the previous sample"})
			}
		}
		rates(&f, prev)
	}
	return f, nil
}

// sampleFile opens one file read-only and reads its header, owner and, for
// a counters file, every allocated counter.
func sampleFile(path string, e env, sinceMs int64) fileSample {
	s := fileSample{Name: filepath.Base(path), at: e.now()}
	if fi, err := os.Stat(path); err == nil {
		s.Size = fi.Size()
	}
	if strings.HasPrefix(s.Name, tempPrefix) {
		s.Error = "being created (a temporary file; ipc.Cleanup removes it if its creator died)"
		return s
	}
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	f, err := ipc.OpenReadOnly(ctx, path)
	if err != nil {
		s.Error = describe(err)
		return s
	}
	defer f.Close()
	s.ident.created = f.Created().UnixMilli()
	if fi, err := os.Stat(path); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			s.ident.dev, s.ident.ino = uint64(st.Dev), st.Ino
		}
	}
	s.Size = f.Len()
	s.KindID = int32(f.Kind())
	s.Kind = kindName(f.Kind())
	if f.Kind() == ipc.KindRing {
		info, err := ipc.InspectMailbox(f)
		if err != nil {
			s.Error = describe(err) // the owner's liveness is still shown
		} else if info.Version != 0 {
			s.Kind = "mailbox" // a ring file with a mailbox header (kind_id stays the ring's)
			s.Mailbox = &mailboxState{State: "open", Stranded: info.Stranded}
			switch {
			case info.ConsumerDead:
				s.Mailbox.State = "consumer dead"
			case info.Closed:
				s.Mailbox.State = "closed"
			}
		}
	}
	if l, err := f.Liveness(e.now(), 0); err != nil {
		s.Error = describe(err)
		return s
	} else {
		s.OwnerPID = l.PID
		s.ident.pid, s.ident.ownerStart = l.PID, l.StartTime
		s.Owner = l.State.String()
		if l.State != ipc.OwnerClosed {
			age := l.HeartbeatAge.Milliseconds()
			s.HeartbeatAgeMs = &age
		}
	}
	switch f.Kind() {
	case ipc.KindCounters:
		err = readCounters(f, &s)
		ages(&s)
	case ipc.KindErrorLog:
		err = readErrors(f, &s, sinceMs)
	case ipc.KindHistograms:
		err = readHistograms(ctx, path, &s)
	}
	if err != nil {
		s.Error = describe(err)
	}
	return s
}

// distributionTicks is the resolution of the live page's percentile
// distributions: HdrHistogram's ticks per half distance to 100 %.
const distributionTicks = 5

// quantiles are the percentiles dutystat shows of every histogram.
var quantiles = []float64{50, 90, 99, 99.9}

// readHistograms reads every histogram of a histograms file: all the
// values recorded since each was created (a rate-like interval needs two
// samples; Prometheus computes its own from the counts).
func readHistograms(ctx context.Context, path string, s *fileSample) error {
	hf, err := ipc.OpenHistograms(ctx, path)
	if err != nil {
		return err
	}
	defer hf.Close()
	var snap histogram.Snapshot
	for i := range hf.Len() {
		err := hf.File.Guard(func() error { return hf.Reader(i).Snapshot(&snap) })
		if err != nil {
			return err
		}
		h := histogramSample{Label: snap.Label, Count: snap.TotalCount, Min: snap.Min, Max: snap.Max,
			Mean: snap.Mean(), Clamped: snap.Clamped}
		for _, q := range quantiles {
			h.Percentiles = append(h.Percentiles, percentile{Quantile: q, Value: snap.ValueAtQuantile(q)})
		}
		h.exact = map[float64]int64{}
		for _, sq := range summaryQuantiles {
			h.exact[sq.percentile] = snap.ValueAtQuantile(sq.percentile)
		}
		h.startMillis = snap.StartMillis
		if snap.TotalCount > 0 {
			hh := snap.Histogram()
			for _, b := range hh.Distribution() {
				if b.Count > 0 {
					h.buckets = append(h.buckets, histogramBucket{value: b.To, count: b.Count})
				}
			}
			for _, b := range hh.CumulativeDistributionWithTicks(distributionTicks) {
				h.distribution = append(h.distribution, percentile{Quantile: b.Quantile, Value: b.ValueAt})
			}
		}
		s.Histograms = append(s.Histograms, h)
	}
	return nil
}

// maxErrors is how many distinct errors of one error log file dutystat
// keeps and shows; the rest are counted. A log another process wrote can
// hold tens of millions of minimal records (24 bytes each in a 2 GiB
// section): keeping them all could exhaust memory.
const maxErrors = 1000

// readErrors reads every record of an error log file, under File.Guard,
// and keeps the first maxErrors. A corrupt record is an error after the
// records before it.
func readErrors(f *ipc.File, s *fileSample, sinceMs int64) error {
	b, err := f.Section(0)
	if err != nil {
		return err
	}
	return f.Guard(func() error {
		_, err := errlog.Read(b, sinceMs, func(o errlog.Observation) {
			if len(s.Errors) == maxErrors {
				s.ErrorsNotShown++
				return
			}
			s.Errors = append(s.Errors, errorSample{Count: o.Count, First: jsonTime{o.First.UTC()}, Last: jsonTime{o.Last.UTC()}, Text: o.Text})
		})
		return err
	})
}

// readCounters reads every allocated counter of a counters file, under
// File.Guard: a file truncated meanwhile is an error, not a crash.
func readCounters(f *ipc.File, s *fileSample) error {
	b, err := f.Section(0)
	if err != nil {
		return err
	}
	meta, vals, err := counters.Split(b)
	if err != nil {
		return fmt.Errorf("%w: counters section: %w", ipc.ErrCorrupt, err)
	}
	r, err := counters.NewReader(meta, vals)
	if err != nil {
		return fmt.Errorf("%w: counters section: %w", ipc.ErrCorrupt, err)
	}
	s.Capacity = r.MaxCounterID() + 1
	return f.Guard(func() error {
		return r.ForEachRecord(func(rec counters.Record) bool {
			key := rec.Key
			for len(key) > 0 && key[len(key)-1] == 0 {
				key = key[:len(key)-1]
			}
			s.Counters = append(s.Counters, counterSample{
				ID:             rec.ID,
				RegistrationID: rec.RegistrationID,
				TypeID:         rec.TypeID,
				Type:           counters.TypeName(rec.TypeID),
				Label:          string(rec.Label),
				Key:            hex.EncodeToString(key),
				Kind:           counters.KindOf(rec.TypeID).String(),
				Value:          rec.Value,
			})
			return true
		})
	})
}

// ages fills in the age of each timestamp counter (an epoch ms) at the
// sample's time.
func ages(s *fileSample) {
	now := s.at.UnixMilli()
	for i := range s.Counters {
		if c := &s.Counters[i]; c.Kind == counters.KindTimestamp.String() && c.Value > 0 {
			age := now - c.Value
			c.AgeMs = &age
		}
	}
}

// rates fills in each counter's rate from the previous sample of the same
// counter: same file (name and identity: a file re-created at the same path
// is another file), id and registration id (a slot freed and reused in
// between is a new counter, not a jump in value).
func rates(f *frame, prev *frame) {
	type key struct {
		file  string
		ident fileIdent
		id    int
		reg   int64
	}
	type old struct {
		value int64
		at    time.Time
	}
	before := map[key]old{}
	for _, p := range prev.Files {
		for _, c := range p.Counters {
			before[key{p.Name, p.ident, c.ID, c.RegistrationID}] = old{c.Value, p.at}
		}
	}
	for i := range f.Files {
		s := &f.Files[i]
		for j := range s.Counters {
			c := &s.Counters[j]
			if c.Kind != counters.KindCounter.String() {
				continue // a gauge's or a timestamp's rate means nothing
			}
			o, ok := before[key{s.Name, s.ident, c.ID, c.RegistrationID}]
			if dt := s.at.Sub(o.at).Seconds(); ok && dt > 0 {
				r := float64(c.Value-o.value) / dt
				c.RatePerSec = &r
			}
		}
	}
}

// describe turns an error about one file into its status line. ipc's and
// counters' errors already say what went wrong (not a duty file, corrupt,
// not ready, truncated, permission denied); a missing file gets a word.
func describe(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "vanished: " + err.Error()
	}
	return err.Error()
}

// kindName names the file kinds ipc defines.
func kindName(k ipc.Kind) string {
	switch k {
	case ipc.KindRing:
		return "ring"
	case ipc.KindPublication:
		return "publication"
	case ipc.KindCounters:
		return "counters"
	case ipc.KindErrorLog:
		return "errorlog"
	case ipc.KindHistograms:
		return "histograms"
	}
	if k >= 1<<16 { // the kinds ipc leaves to applications
		return "user(" + strconv.Itoa(int(k)) + ")"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// printText prints a frame as tables: the files, then each counters file's
// counters, then each error log file's errors.
func printText(w io.Writer, f *frame) error {
	var b strings.Builder
	if err := printFiles(&b, f); err != nil {
		return err
	}
	for _, s := range f.Files {
		if s.KindID != int32(ipc.KindCounters) || s.Capacity == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s: %d of %d counters\n", printable(s.Name), len(s.Counters), s.Capacity)
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "ID\tTYPE\tVALUE\tRATE/S\t\tLABEL")
		for _, c := range s.Counters {
			rate := "-"
			if c.RatePerSec != nil {
				rate = strconv.FormatFloat(*c.RatePerSec, 'f', 1, 64)
			}
			value := strconv.FormatInt(c.Value, 10)
			if c.AgeMs != nil {
				value = strconv.FormatInt(*c.AgeMs, 10) + "ms ago"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t\t%s\n", c.ID, printable(c.Type), value, rate, printable(c.Label))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, s := range f.Files {
		if len(s.Histograms) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s: %d histograms\n", printable(s.Name), len(s.Histograms))
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "COUNT\tP50\tP90\tP99\tP99.9\tMAX\tCLAMPED\t\tHISTOGRAM")
		for _, h := range s.Histograms {
			fmt.Fprintf(tw, "%d\t", h.Count)
			for _, p := range h.Percentiles {
				fmt.Fprintf(tw, "%d\t", p.Value)
			}
			fmt.Fprintf(tw, "%d\t%d\t\t%s\n", h.Max, h.Clamped, printable(h.Label))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if err := printErrorLogs(&b, f); err != nil {
		return err
	}
	if err := printJournals(&b, f.Journals); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// printFiles prints the frame's header line and its files table.
func printFiles(b *strings.Builder, f *frame) error {
	fmt.Fprintf(b, "dutystat %s  %s  %d files\n", f.Dir, f.Time.Format(time.RFC3339), len(f.Files))
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tSIZE\tPID\tOWNER\tHEARTBEAT\tSTATUS")
	for _, s := range f.Files {
		kind, pid, owner, hb, status := dash(s.Kind), "-", dash(s.Owner), "-", s.status()
		if s.OwnerPID != 0 {
			pid = strconv.Itoa(s.OwnerPID)
		}
		if s.HeartbeatAgeMs != nil {
			hb = strconv.FormatInt(*s.HeartbeatAgeMs, 10) + "ms ago"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", printable(s.Name), kind, s.Size, pid, owner, hb, printable(status))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return nil
}

// printErrorLogs prints each error log file's distinct errors.
func printErrorLogs(b *strings.Builder, f *frame) error {
	for _, s := range f.Files {
		if s.KindID != int32(ipc.KindErrorLog) || (len(s.Errors) == 0 && s.Error != "") {
			continue
		}
		fmt.Fprintf(b, "\n%s: %d distinct errors", printable(s.Name), len(s.Errors)+s.ErrorsNotShown)
		if f.ErrorsSince != nil {
			fmt.Fprintf(b, " last observed since %s", f.ErrorsSince.UTC().Format(errorTime))
		}
		b.WriteByte('\n')
		if len(s.Errors) == 0 {
			continue
		}
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  COUNT\tFIRST\tLAST\tERROR")
		for _, e := range s.Errors {
			line, _, _ := strings.Cut(e.Text, "\n")
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\n", e.Count, e.First.Format(errorTime), e.Last.Format(errorTime), printable(line))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if s.ErrorsNotShown > 0 {
			fmt.Fprintf(b, "  (and %d more distinct errors not shown: dutystat keeps the first %d of a file)\n", s.ErrorsNotShown, maxErrors)
		}
	}
	return nil
}

// errorTime formats error log times: UTC, ms.
const errorTime = "2006-01-02T15:04:05.000Z"

// printable escapes the control characters of s (tabs, carriage returns,
// terminal escape sequences) as \xNN or \uNNNN: labels, names and error
// texts come from files any process may have written, and must neither
// break the tables' columns nor reach the operator's terminal as commands.
// Invalid UTF-8 bytes are escaped the same way. JSON output keeps the
// strings as they are (encoding/json escapes them).
func printable(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case unicode.IsControl(r) && r < utf8.RuneSelf:
			fmt.Fprintf(&b, "\\x%02x", r)
		case unicode.IsControl(r):
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// isTerminal reports whether w is a terminal (watch mode then redraws the
// screen).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlGetTermios)
	return err == nil
}
