package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/internal/childtest"
	"github.com/dutyrt/duty/internal/countertype"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/runner"
)

func TestMain(m *testing.M) {
	childtest.Run(childEnv, map[string]func() error{"consumer": childConsumer})
	goleak.VerifyTestMain(m)
}

// childEnv names the role a child process of these tests plays.
const childEnv = "DUTYSTAT_TEST_CHILD"

// childConsumer creates the mailbox file $DUTYSTAT_TEST_DIR/inbox, says
// "ready", and never drains it: its senders' messages wait until it dies.
func childConsumer() error {
	_, mf, err := ipc.CreateMailbox(os.Getenv("DUTYSTAT_TEST_DIR"), "inbox", mailbox.Config{Capacity: 4096})
	if err != nil {
		return err
	}
	defer mf.Close()
	fmt.Println("ready")
	select {}
}

// fakeEnv is a clock that only moves when the fake sleep is called; the
// sleep runs onSleep first (to change counters between samples).
type fakeEnv struct {
	t       time.Time
	onSleep func(d time.Duration)
	sleeps  []time.Duration
}

func (f *fakeEnv) env() env {
	return env{
		now: func() time.Time { return f.t },
		sleep: func(ctx context.Context, d time.Duration) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			f.sleeps = append(f.sleeps, d)
			if f.onSleep != nil {
				f.onSleep(d)
			}
			f.t = f.t.Add(d)
			return nil
		},
		afterList: func() {},
	}
}

// fixture is a directory with a counters file of known values, a ring, a
// file that is not a duty file, and a counters file with a corrupt record.
type fixture struct {
	dir                     string
	cf                      *ipc.CountersFile
	cycles, work, errs, max *counters.Counter
	beat                    *counters.Counter
	ring                    *ipc.Ring
	corrupt                 *ipc.CountersFile
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	fx := &fixture{dir: t.TempDir()}
	var err error
	fx.cf, err = ipc.CreateCounters(fx.dir, "stats", 16, nil)
	require.NoError(t, err)
	t.Cleanup(func() { fx.cf.Close() })
	require.NoError(t, fx.cf.File.Heartbeat(time.Now().UnixMilli()))
	m := fx.cf.Manager()
	alloc := func(label string, typeID int32, key []byte, v int64) *counters.Counter {
		c, err := m.Allocate(label, typeID, key)
		require.NoError(t, err)
		c.Set(v)
		return c
	}
	fx.cycles = alloc("duty-cycles: gateway", countertype.DutyCycles, nil, 1_000_000)
	gone := alloc("freed: never shown", countertype.Errors, nil, 99)
	fx.work = alloc("total-work: gateway", countertype.TotalWork, []byte{0xab, 0xcd}, 250_000)
	fx.errs = alloc("errors: gateway", countertype.Errors, nil, 3)
	fx.max = alloc("longest-cycle-ns: gateway", countertype.LongestCycleNs, nil, 48_123)
	alloc("app counter", counters.UserType(7, counters.KindCounter), nil, -17)
	alloc("app gauge", counters.UserType(8, counters.KindGauge), nil, 40)
	fx.beat = alloc("heartbeat: gateway", countertype.Heartbeat, nil, time.Now().UnixMilli())
	require.NoError(t, gone.Close())

	fx.ring, err = ipc.CreateRing(fx.dir, "orders", 1024)
	require.NoError(t, err)
	t.Cleanup(func() { fx.ring.Close() })
	require.NoError(t, fx.ring.File.Heartbeat(time.Now().UnixMilli()))

	junk := append([]byte("not a duty file at all"), make([]byte, 4096)...)
	require.NoError(t, os.WriteFile(filepath.Join(fx.dir, "junk"), junk, 0o600))

	// A counters file whose second record has a state no manager writes.
	fx.corrupt, err = ipc.CreateCounters(fx.dir, "damaged", 4, nil)
	require.NoError(t, err)
	t.Cleanup(func() { fx.corrupt.Close() })
	c, err := fx.corrupt.Manager().Allocate("ok before the damage", countertype.Errors, nil)
	require.NoError(t, err)
	c.Set(5)
	_, err = fx.corrupt.Manager().Allocate("damaged", countertype.Errors, nil)
	require.NoError(t, err)
	b, err := fx.corrupt.File.Section(0)
	require.NoError(t, err)
	binary.LittleEndian.PutUint32(b[1*countersMetadataRecordLength+countersStateOffset:], 7)
	return fx
}

func runOK(t *testing.T, e env, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	code := runEnv(context.Background(), &out, &errOut, args, e)
	require.Equal(t, 0, code, "stderr: %s", errOut.String())
	require.Empty(t, errOut.String())
	return out.String()
}

// row matches one counter row: id, type, value, rate, label.
func row(id, typ, value, rate, label string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^\s*` + id + `\s+` + regexp.QuoteMeta(typ) + `\s+` + value + `\s+` + regexp.QuoteMeta(rate) + `\s+` + regexp.QuoteMeta(label) + `$`)
}

// TestOnceWithRates: one frame; between the two samples of the window the
// fake sleep adds known amounts while the fake clock moves 250 ms, so the
// printed values and rates are exact.
func TestOnceWithRates(t *testing.T) {
	fx := newFixture(t)
	fe := &fakeEnv{t: time.Now()}
	fx.beat.Set(fe.t.UnixMilli() - 1250) // 1500 ms old at the second sample
	fe.onSleep = func(time.Duration) {
		fx.cycles.Add(500) // 2000/s over 250 ms
		fx.work.Add(25)    // 100/s
		fx.max.ProposeMax(50_000)
	}
	out := runOK(t, fe.env(), "-dir", fx.dir, "-window", "250ms")
	t.Log("\n" + out)
	require.Equal(t, []time.Duration{250 * time.Millisecond}, fe.sleeps)

	require.Contains(t, out, "stats: 7 of 16 counters")
	for _, re := range []*regexp.Regexp{
		row("0", "duty-cycles", "1000500", "2000.0", "duty-cycles: gateway"),
		row("2", "total-work", "250025", "100.0", "total-work: gateway"),
		row("3", "errors", "3", "0.0", "errors: gateway"),
		row("4", "longest-cycle-ns", "50000", "-", "longest-cycle-ns: gateway"), // a gauge: no rate
		row("5", "user:7", "-17", "0.0", "app counter"),
		row("6", "user:8", "40", "-", "app gauge"),
		row("7", "heartbeat", "1500ms ago", "-", "heartbeat: gateway"), // a timestamp: its age
		row("0", "errors", "5", "0.0", "ok before the damage"),
	} {
		require.Regexp(t, re, out)
	}
	require.NotContains(t, out, "never shown", "a freed counter is not listed")

	// The file table: every file, with its kind, owner and status.
	require.Regexp(t, `(?m)^stats\s+counters\s+\d+\s+`+strconv.Itoa(os.Getpid())+`\s+alive\s+-?\d+ms ago\s+ok$`, out)
	require.Regexp(t, `(?m)^orders\s+ring\s+\d+\s+`+strconv.Itoa(os.Getpid())+`\s+alive\s+-?\d+ms ago\s+ok$`, out)
	require.Regexp(t, `(?m)^junk\s+-\s+\d+\s+-\s+-\s+-\s+ipc: not a duty file: `, out)
	require.Regexp(t, `(?m)^damaged\s+counters\s+.*counters: corrupt record: counter 1: state 7$`, out)
}

// TestNeverWrites: dutystat leaves every file's bytes and modification
// time as they were (it maps them read-only; this checks it end to end).
func TestNeverWrites(t *testing.T) {
	fx := newFixture(t)
	type state struct {
		sum   [32]byte
		mtime time.Time
	}
	snap := func() map[string]state {
		m := map[string]state{}
		entries, err := os.ReadDir(fx.dir)
		require.NoError(t, err)
		for _, e := range entries {
			p := filepath.Join(fx.dir, e.Name())
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			fi, err := os.Stat(p)
			require.NoError(t, err)
			m[e.Name()] = state{sha256.Sum256(b), fi.ModTime()}
		}
		return m
	}
	before := snap()
	fe := &fakeEnv{t: time.Now()}
	runOK(t, fe.env(), "-dir", fx.dir, "-watch", "-n", "3", "-window", "1ms", "-interval", "1ms")
	runOK(t, fe.env(), "-dir", fx.dir, "-json", "-window", "0")
	require.Equal(t, before, snap())
}

// TestVanishedAndCorruptAreNotFatal: a file removed between the listing
// and its opening, a file removed between two samples, a corrupt record and
// a foreign file are all reported, and the exit status is 0.
func TestVanishedAndCorruptAreNotFatal(t *testing.T) {
	fx := newFixture(t)
	extra, err := ipc.CreateCounters(fx.dir, "shortlived", 2, nil)
	require.NoError(t, err)
	defer extra.Close()
	later, err := ipc.CreateCounters(fx.dir, "later", 2, nil)
	require.NoError(t, err)
	defer later.Close()

	fe := &fakeEnv{t: time.Now()}
	e := fe.env()
	lists := 0
	e.afterList = func() {
		if lists++; lists == 1 { // listed, then gone before it is opened
			require.NoError(t, extra.File.Remove())
		}
	}
	fe.onSleep = func(time.Duration) { // sampled once, gone by the second sample
		require.NoError(t, later.File.Remove())
	}
	out := runOK(t, e, "-dir", fx.dir, "-watch", "-counters", "-n", "2", "-window", "0", "-interval", "1s")
	t.Log("\n" + out)
	frames := strings.Split(out, "dutystat "+fx.dir)
	require.Len(t, frames, 3, "two frames")
	require.Regexp(t, `(?m)^shortlived\s+-\s+.*vanished: `, frames[1])
	require.Regexp(t, `(?m)^later\s+counters\s+.*\s+ok$`, frames[1])
	require.Regexp(t, `(?m)^later\s+counters\s+.*vanished since the previous sample$`, frames[2])
	require.NotContains(t, frames[2], "shortlived")
	for _, f := range frames[1:] {
		require.Regexp(t, `(?m)^damaged\s+counters\s+.*counters: corrupt record`, f)
		require.Regexp(t, `(?m)^junk\s+.*not a duty file`, f)
		require.Regexp(t, row("0", "duty-cycles", "1000000", "-", "duty-cycles: gateway"), frames[1])
	}
	// The second frame has rates against the first (nothing changed: 0).
	require.Regexp(t, row("0", "duty-cycles", "1000000", "0.0", "duty-cycles: gateway"), frames[2])
	require.Equal(t, []time.Duration{time.Second}, fe.sleeps)
}

// TestWatchCountsFramesAndStopsOnCancel: -n frames, one sleep between
// each; a cancelled context ends the loop with status 0.
func TestWatchCountsFramesAndStopsOnCancel(t *testing.T) {
	fx := newFixture(t)
	fe := &fakeEnv{t: time.Now()}
	out := runOK(t, fe.env(), "-dir", fx.dir, "-watch", "-n", "3", "-window", "100ms", "-interval", "2s")
	require.Equal(t, 3, strings.Count(out, "dutystat "+fx.dir))
	require.Equal(t, []time.Duration{100 * time.Millisecond, 2 * time.Second, 2 * time.Second}, fe.sleeps)

	ctx, cancel := context.WithCancel(context.Background())
	fe = &fakeEnv{t: time.Now()}
	e := fe.env()
	n := 0
	e.afterList = func() {
		if n++; n == 4 {
			cancel()
		}
	}
	var o, eo bytes.Buffer
	require.Equal(t, 0, runEnv(ctx, &o, &eo, []string{"-dir", fx.dir, "-watch", "-window", "0"}, e))
	require.Equal(t, 4, strings.Count(o.String(), "dutystat "+fx.dir), "frames until cancelled")
}

// TestWatchRealSignalContext runs the real run() in watch mode with a
// context that ends: it returns 0 (this is what SIGINT does through
// signal.NotifyContext).
func TestWatchRealSignalContext(t *testing.T) {
	fx := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var o, eo bytes.Buffer
	require.Equal(t, 0, run(ctx, &o, &eo, []string{"-dir", fx.dir, "-watch", "-interval", "10ms", "-window", "1ms"}))
	require.Regexp(t, `(?m)^\s*gateway\s+stats\s`, o.String(), "the runner's row")
}

// TestJSON: -json output parses, one object per frame, with the known
// values and rates.
func TestJSON(t *testing.T) {
	fx := newFixture(t)
	fe := &fakeEnv{t: time.Now()}
	fe.onSleep = func(time.Duration) { fx.errs.Add(10) }
	out := runOK(t, fe.env(), "-dir", fx.dir, "-json", "-watch", "-n", "2", "-window", "500ms", "-interval", "500ms")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2)
	for i, line := range lines {
		var f frame
		require.NoError(t, json.Unmarshal([]byte(line), &f), line)
		require.Equal(t, fx.dir, f.Dir)
		byName := map[string]fileSample{}
		for _, s := range f.Files {
			byName[s.Name] = s
		}
		require.Len(t, byName, 4)
		st := byName["stats"]
		require.Equal(t, "counters", st.Kind)
		require.Equal(t, int32(ipc.KindCounters), st.KindID)
		require.Equal(t, os.Getpid(), st.OwnerPID)
		require.Equal(t, "alive", st.Owner)
		require.Equal(t, 16, st.Capacity)
		require.Empty(t, st.Error)
		require.Len(t, st.Counters, 7)
		require.Equal(t, "gauge", st.Counters[3].Kind)
		require.Nil(t, st.Counters[3].RatePerSec, "a gauge has no rate")
		require.Equal(t, "timestamp", st.Counters[6].Kind)
		require.NotNil(t, st.Counters[6].AgeMs)
		c := st.Counters[2]
		require.Equal(t, "counter", c.Kind)
		require.Equal(t, "errors: gateway", c.Label)
		require.Equal(t, countertype.Errors, c.TypeID)
		require.Equal(t, "errors", c.Type)
		require.Equal(t, int64(3+10*(i+1)), c.Value)
		require.NotNil(t, c.RatePerSec)
		require.Equal(t, 20.0, *c.RatePerSec)
		require.Equal(t, "abcd", st.Counters[1].Key)
		require.Equal(t, fx.cycles.RegistrationID(), st.Counters[0].RegistrationID)
		require.Equal(t, "ring", byName["orders"].Kind)
		require.Contains(t, byName["junk"].Error, "not a duty file")
		require.Contains(t, byName["damaged"].Error, "corrupt")
		require.Len(t, byName["damaged"].Counters, 1, "records before the damage are delivered")
	}
}

// TestReusedSlotIsANewCounter: a counter freed and its id reused between
// two samples gets no rate (different registration id), rather than a jump.
func TestReusedSlotIsANewCounter(t *testing.T) {
	dir := t.TempDir()
	now := clock.NewManual(time.UnixMilli(0))
	cf, err := ipc.CreateCounters(dir, "reuse", 2, &counters.Config{FreeToReuseTimeout: 0, Clock: now})
	require.NoError(t, err)
	defer cf.Close()
	c, err := cf.Manager().Allocate("first", countertype.Errors, nil)
	require.NoError(t, err)
	c.Set(1000)
	fe := &fakeEnv{t: time.Now()}
	fe.onSleep = func(time.Duration) {
		require.NoError(t, c.Close())
		c2, err := cf.Manager().Allocate("second", countertype.Errors, nil)
		require.NoError(t, err)
		require.Equal(t, c.ID(), c2.ID())
		c2.Set(5)
	}
	out := runOK(t, fe.env(), "-dir", dir, "-window", "1s")
	require.Regexp(t, row("0", "errors", "5", "-", "second"), out)
}

// TestBadDirAndFlags: an unreadable directory is exit 1; bad flags 2.
func TestBadDirAndFlags(t *testing.T) {
	var o, e bytes.Buffer
	require.Equal(t, 1, run(context.Background(), &o, &e, []string{"-dir", filepath.Join(t.TempDir(), "missing"), "-window", "0"}))
	require.Contains(t, e.String(), "no such file or directory")
	for _, args := range [][]string{{"-interval", "0"}, {"-window", "-1s"}, {"-n", "-1"}, {"-since", "-1s"}, {"extra"}, {"-bogus"}} {
		o.Reset()
		e.Reset()
		require.Equal(t, 2, run(context.Background(), &o, &e, args), "%q", args)
		require.NotEmpty(t, e.String())
	}
	require.Equal(t, 2, run(context.Background(), &o, &e, []string{"-h"}))
	// An empty directory is fine.
	o.Reset()
	require.Equal(t, 0, run(context.Background(), &o, &e, []string{"-dir", t.TempDir(), "-window", "0"}))
	require.Contains(t, o.String(), "0 files")
}

// workFor is an agent that does 1 unit of work per cycle for n cycles,
// then idles.
type workFor struct{ n, i int }

func (a *workFor) RoleName() string { return "matcher" }
func (a *workFor) OnStart() error   { return nil }
func (a *workFor) OnClose() error   { return nil }
func (a *workFor) DoWork() (int, error) {
	if a.i >= a.n {
		return 0, nil
	}
	a.i++
	return 1, nil
}

// TestRunnerStatsEndToEnd: a runner's statistics, kept live in a counters
// file by runner.WithCounters, show in dutystat's output while it runs, and
// are gone once it has stopped.
func TestRunnerStatsEndToEnd(t *testing.T) {
	dir := t.TempDir()
	cf, err := ipc.CreateCounters(dir, "proc", 8, nil)
	require.NoError(t, err)
	defer cf.Close()
	r, err := runner.New(&workFor{n: 5000}, runner.WithIdle(idle.BusySpin()), runner.WithCounters(cf.Manager()))
	require.NoError(t, err)
	require.NoError(t, r.Start())
	var out string
	require.Eventually(t, func() bool {
		out = runOK(t, (&fakeEnv{t: time.Now()}).env(), "-dir", dir, "-window", "0")
		return row("1", "total-work", "5000", "-", "total-work: matcher").MatchString(out)
	}, 10*time.Second, 10*time.Millisecond, "the work done, live")
	t.Log("\n" + out)
	require.Regexp(t, row("0", "duty-cycles", `\d+`, "-", "duty-cycles: matcher"), out)
	require.Regexp(t, row("2", "errors", "0", "-", "errors: matcher"), out)
	require.Regexp(t, row("3", "longest-cycle-ns", `\d+`, "-", "longest-cycle-ns: matcher"), out)
	require.NoError(t, r.Close())
	out = runOK(t, (&fakeEnv{t: time.Now()}).env(), "-dir", dir, "-window", "0")
	require.Contains(t, out, "proc: 0 of 8 counters", "freed counters are not listed")
}

// FuzzSampleCounters: whatever bytes another process left in a counters
// file's section, sampling it returns (with an error or not) and never
// panics or hangs, and the text and JSON printers accept the result.
func FuzzSampleCounters(f *testing.F) {
	dir := f.TempDir()
	cf, err := ipc.CreateCounters(dir, "fuzz", 4, nil)
	require.NoError(f, err)
	defer cf.Close()
	b, err := cf.File.Section(0)
	require.NoError(f, err)
	c, err := cf.Manager().Allocate("seed", countertype.Errors, []byte("k"))
	require.NoError(f, err)
	c.Set(9)
	// Inputs are a prefix of the metadata region (at most two records, so
	// that minimization stays quick) and a value for counter 0.
	f.Add(append([]byte(nil), b[:countersLabelOffset+8]...), int64(9))
	f.Add([]byte{1, 0, 0, 0, 0xe8, 3, 0, 0}, int64(-1))
	lay, err := counters.Layout(4)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, data []byte, v int64) {
		if len(data) > 2*countersMetadataRecordLength {
			return
		}
		clear(b)
		copy(b, data)
		binary.LittleEndian.PutUint64(b[lay.ValuesOffset:], uint64(v))
		fr, err := sample(dir, (&fakeEnv{t: time.Now()}).env(), nil, 0)
		require.NoError(t, err)
		require.Len(t, fr.Files, 1)
		var out bytes.Buffer
		require.NoError(t, printText(&out, &fr))
		require.NoError(t, json.NewEncoder(&out).Encode(fr))
	})
}

// TestMailboxKind: a ring file with a mailbox header is listed as a
// mailbox (its kind_id stays the ring's); a plain ring stays a ring.
func TestMailboxKind(t *testing.T) {
	dir := t.TempDir()
	_, m, err := ipc.CreateMailbox(dir, "inbox", mailbox.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	r, err := ipc.CreateRing(dir, "plain", 1024)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })

	fe := &fakeEnv{t: time.Now()}
	var f frame
	require.NoError(t, json.Unmarshal([]byte(runOK(t, fe.env(), "-dir", dir, "-json")), &f))
	kinds := map[string]string{}
	for _, s := range f.Files {
		kinds[s.Name] = s.Kind
		require.Equal(t, int32(ipc.KindRing), s.KindID, s.Name)
	}
	require.Equal(t, map[string]string{"inbox": "mailbox", "plain": "ring"}, kinds)

	info, err := ipc.InspectMailbox(m.File)
	require.NoError(t, err)
	require.Equal(t, int32(2), info.Version) // the mailbox layout version, docs/ipc.md "Mailbox file"
	info, err = ipc.InspectMailbox(r.File)
	require.NoError(t, err)
	require.Zero(t, info.Version)
	for _, s := range f.Files {
		if s.Name == "inbox" {
			require.Equal(t, &mailboxState{State: "open"}, s.Mailbox)
		}
	}
}

// TestStrandedMessagesShown: a mailbox's consumer, a real child process,
// is SIGKILLed with messages queued; a sender keeps sending until it is
// refused with ErrConsumerDead. dutystat's table, its JSON and its
// Prometheus exporter show the mailbox's consumer as dead and the messages
// it stranded, the same count as the sender's Stats: accepted, never
// delivered, and counted where an operator looks.
func TestStrandedMessagesShown(t *testing.T) {
	dir := t.TempDir()
	child := childtest.Start(t, childEnv, "consumer", "DUTYSTAT_TEST_DIR="+dir)
	require.Equal(t, "ready", child.Line(t))
	m, mf, err := ipc.OpenMailbox(t.Context(), filepath.Join(dir, "inbox"))
	require.NoError(t, err)
	defer mf.Close()
	for range 5 {
		require.NoError(t, m.Send(1, []byte("queued before the kill")))
	}
	child.Kill(t)
	for err == nil {
		err = m.Send(1, []byte("queued after the kill"))
		require.NotErrorIs(t, err, mailbox.ErrBackPressured, "known before the ring filled")
	}
	require.ErrorIs(t, err, mailbox.ErrConsumerDead)
	stranded := m.Stats().Stranded
	require.GreaterOrEqual(t, stranded, int64(5))

	fe := &fakeEnv{t: time.Now()}
	var f frame
	require.NoError(t, json.Unmarshal([]byte(runOK(t, fe.env(), "-dir", dir, "-json")), &f))
	require.Len(t, f.Files, 1)
	require.Equal(t, &mailboxState{State: "consumer dead", Stranded: stranded}, f.Files[0].Mailbox)
	require.Contains(t, runOK(t, fe.env(), "-dir", dir), fmt.Sprintf("consumer dead: %d messages stranded", stranded))

	_, body := scrapeText(t, dir)
	require.Contains(t, body, fmt.Sprintf(`duty_mailbox_stranded_messages{file="inbox"} %d`, stranded))
}

// The counters metadata record's layout, from docs/layouts.md (the
// counters package keeps its offsets unexported).
const (
	countersMetadataRecordLength = 512
	countersStateOffset          = 0
	countersLabelOffset          = 132
)
