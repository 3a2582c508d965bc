package ipc

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/internal/countertype"
)

// countersOwnerRole is the child role of the cross-process counters test.
// It is handled here, by an init function that runs before TestMain, so
// that the shared child dispatcher in main_test.go needs no entry for it.
const countersOwnerRole = "counters-owner"

func init() {
	if os.Getenv(childEnv) != countersOwnerRole {
		return
	}
	if err := childCountersOwner(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "child", countersOwnerRole, "failed:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// childCountersOwner creates the counters file DUTY_IPC_DIR/DUTY_IPC_NAME
// with a clock it reads from stdin commands, and obeys commands one line at
// a time, answering each with one line:
//
//	alloc <type id> <key hex|-> <value> <label...>  -> "id <id> <registration id>"
//	free <id>                                       -> "freed <id>"
//	clock <epoch ms>                                -> "clock <epoch ms>"
//	exit                                            -> closes the file and exits
func childCountersOwner(in io.Reader, out io.Writer) error {
	now := clock.NewManual(time.UnixMilli(1_000_000))
	timeout := time.Duration(envInt("DUTY_IPC_REUSE_MS")) * time.Millisecond
	cf, err := CreateCounters(os.Getenv("DUTY_IPC_DIR"), os.Getenv("DUTY_IPC_NAME"), envInt("DUTY_IPC_COUNT"),
		&counters.Config{FreeToReuseTimeout: timeout, Clock: now})
	if err != nil {
		return err
	}
	defer cf.Close()
	m := cf.Manager()
	live := map[int]*counters.Counter{}
	fmt.Fprintln(out, "ready", cf.File.Path())
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "alloc":
			if len(f) < 5 {
				return fmt.Errorf("alloc: %q", sc.Text())
			}
			typeID, _ := strconv.Atoi(f[1])
			var key []byte
			if f[2] != "-" {
				key = []byte(f[2])
			}
			v, _ := strconv.ParseInt(f[3], 10, 64)
			c, err := m.Allocate(strings.Join(f[4:], " "), int32(typeID), key)
			if err != nil {
				fmt.Fprintln(out, "error", err)
				continue
			}
			c.Set(v)
			live[c.ID()] = c
			fmt.Fprintln(out, "id", c.ID(), c.RegistrationID())
		case "free":
			id, _ := strconv.Atoi(f[1])
			if err := live[id].Close(); err != nil {
				return err
			}
			fmt.Fprintln(out, "freed", id)
		case "clock":
			ms, _ := strconv.ParseInt(f[1], 10, 64)
			now.SetWall(time.UnixMilli(ms))
			fmt.Fprintln(out, "clock", ms)
		case "exit":
			return nil
		default:
			return fmt.Errorf("unknown command %q", sc.Text())
		}
	}
	return sc.Err()
}

// ask sends one command to a counters-owner child and returns its answer.
func ask(t *testing.T, p *proc, format string, args ...any) string {
	t.Helper()
	_, err := fmt.Fprintf(p.Stdin, format+"\n", args...)
	require.NoError(t, err)
	return p.Line(t)
}

// allocID parses an "id <id> <registration id>" answer.
func allocID(t *testing.T, answer string) (int, int64) {
	t.Helper()
	var id int
	var reg int64
	_, err := fmt.Sscanf(answer, "id %d %d", &id, &reg)
	require.NoError(t, err, "answer %q", answer)
	return id, reg
}

type seen struct {
	id      int
	typeID  int32
	label   string
	key     string
	value   int64
	regID   int64
	ownerID int64
}

// snapshot returns every allocated counter, in id order.
func snapshot(t *testing.T, r *counters.Reader) []seen {
	t.Helper()
	var out []seen
	require.NoError(t, r.ForEachRecord(func(rec counters.Record) bool {
		out = append(out, seen{
			id: rec.ID, typeID: rec.TypeID, label: string(rec.Label),
			key: strings.TrimRight(string(rec.Key), "\x00"), value: rec.Value,
			regID: rec.RegistrationID, ownerID: rec.OwnerID,
		})
		return true
	}))
	return out
}

// TestCrossProcessCounters: a child process owns a counters file and
// allocates, frees and reallocates counters on command, with a clock the
// parent drives; the parent reads labels, keys, values, states and
// deadlines back through a read-only mapping, and checks that a freed id is
// reused only once the child's clock has passed its deadline.
func TestCrossProcessCounters(t *testing.T) {
	const reuse = 500 // ms
	dir := testDir(t)
	child := startChild(t, "", countersOwnerRole, append(dirNameEnv(dir, "stats"),
		"DUTY_IPC_COUNT=8", "DUTY_IPC_REUSE_MS="+strconv.Itoa(reuse))...).Start(t)
	ready := child.Line(t)
	require.True(t, strings.HasPrefix(ready, "ready "), "%q, stderr: %s", ready, child.Stderr)
	path := strings.TrimPrefix(ready, "ready ")
	require.Equal(t, filepath.Join(dir, "stats"), path)

	cf, err := OpenCounters(ctxT(t), path, withLiveOwner())
	require.NoError(t, err)
	defer cf.Close()
	require.True(t, cf.isReadOnly())
	require.Nil(t, cf.Manager())
	r := cf.Reader()
	require.Equal(t, 7, r.MaxCounterID())
	require.Empty(t, snapshot(t, r))

	id0, reg0 := allocID(t, ask(t, child, "alloc %d sub-0001 42 sub-pos: orders gateway", countertype.SubscriberPosition))
	id1, reg1 := allocID(t, ask(t, child, "alloc %d - -7 errors: gateway", countertype.Errors))
	id2, reg2 := allocID(t, ask(t, child, "alloc %d key-two 1234567890123 duty-cycles: gateway", countertype.DutyCycles))
	require.Equal(t, []int{0, 1, 2}, []int{id0, id1, id2})
	require.Equal(t, []seen{
		{id: 0, typeID: countertype.SubscriberPosition, label: "sub-pos: orders gateway", key: "sub-0001", value: 42, regID: reg0},
		{id: 1, typeID: countertype.Errors, label: "errors: gateway", value: -7, regID: reg1},
		{id: 2, typeID: countertype.DutyCycles, label: "duty-cycles: gateway", key: "key-two", value: 1234567890123, regID: reg2},
	}, snapshot(t, r))

	// Free id 1 at t=1 000 000 ms: reclaimed, key zeroed, label and value
	// kept, deadline now + 500 ms; iteration skips it.
	require.Equal(t, "freed 1", ask(t, child, "free 1"))
	rec, err := r.Record(1)
	require.NoError(t, err)
	require.Equal(t, counters.StateReclaimed, rec.State)
	deadline := rec.FreeForReuseDeadline
	require.Equal(t, int64(1_000_000+reuse), deadline)
	require.Equal(t, "errors: gateway", string(rec.Label))
	v, err := r.Value(1)
	require.NoError(t, err)
	require.Equal(t, int64(-7), v)
	require.Equal(t, make([]byte, 112), rec.Key)
	require.Equal(t, []int{0, 2}, ids(snapshot(t, r)))

	// Before the deadline (and at deadline-1) the freed id is not reused.
	require.Equal(t, "clock 1000499", ask(t, child, "clock %d", deadline-1))
	id3, _ := allocID(t, ask(t, child, "alloc %d - 5 back-pressure: orders", countertype.BackPressureEvents))
	require.Equal(t, 3, id3)
	rec, err = r.Record(1)
	require.NoError(t, err)
	require.Equal(t, counters.StateReclaimed, rec.State)

	// At the deadline it is, with a new registration id and a fresh record.
	require.Equal(t, "clock 1000500", ask(t, child, "clock %d", deadline))
	id4, reg4 := allocID(t, ask(t, child, "alloc %d hb 9 heartbeat: gateway", countertype.Heartbeat))
	require.Equal(t, 1, id4, "the freed id is reused once its deadline has passed")
	require.Greater(t, reg4, reg2)
	got := snapshot(t, r)
	require.Equal(t, []int{0, 1, 2, 3}, ids(got))
	require.Equal(t, seen{id: 1, typeID: countertype.Heartbeat, label: "heartbeat: gateway", key: "hb", value: 9, regID: reg4}, got[1])
	rec, err = r.Record(1)
	require.NoError(t, err)
	require.Equal(t, countersNotFreeToReuse, rec.FreeForReuseDeadline)
	found, err := r.FindByRegistrationID(reg1)
	require.NoError(t, err)
	require.Equal(t, -1, found, "the old incarnation is gone")

	// The reader's mapping is read-only: a store faults, and the file is
	// unchanged.
	sum := fileSum(t, path)
	b, err := cf.File.Section(0)
	require.NoError(t, err)
	err = cf.File.Guard(func() error { b[0] = 0xff; return nil })
	require.ErrorIs(t, err, ErrFault)
	require.Equal(t, sum, fileSum(t, path))

	_, err = io.WriteString(child.Stdin, "exit\n")
	require.NoError(t, err)
	require.NoError(t, child.Wait(t), child.Stderr.String())
	l, err := cf.File.Liveness(time.Now(), 0)
	require.NoError(t, err)
	require.Equal(t, OwnerClosed, l.State, "the owner's close is visible")
	require.Len(t, snapshot(t, r), 4, "counters stay readable after the owner closed")
}

func ids(s []seen) []int {
	var out []int
	for _, c := range s {
		out = append(out, c.id)
	}
	return out
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return sha256.Sum256(b)
}

// TestCountersFileLayout: the section is counters.Layout(n) bytes at
// offset headerLength, metadata then values, and the owner's stores land at
// Agrona's offsets in the file.
func TestCountersFileLayout(t *testing.T) {
	dir := testDir(t)
	cf, err := CreateCounters(dir, "c", 10, nil)
	require.NoError(t, err)
	defer cf.Close()
	require.False(t, cf.isReadOnly())
	require.True(t, cf.File.IsOwner())
	require.Equal(t, KindCounters, cf.File.Kind())
	lay, err := counters.Layout(10)
	require.NoError(t, err)
	require.Equal(t, int64(headerLength)+alignUp(int64(lay.Length), sectionAlignment), cf.File.Len())

	m := cf.Manager()
	require.Equal(t, 9, m.Reader().MaxCounterID())
	_, err = m.Allocate("a", countertype.Errors, nil)
	require.NoError(t, err)
	c, err := m.Allocate("total-work: x", countertype.TotalWork, []byte("k"))
	require.NoError(t, err)
	c.Set(77)

	raw, err := os.ReadFile(cf.File.Path())
	require.NoError(t, err)
	le := binary.LittleEndian
	meta := raw[headerLength+lay.MetadataOffset:]
	vals := raw[headerLength+lay.ValuesOffset:]
	rec := meta[1*countersMetadataRecordLength:]
	require.Equal(t, uint32(counters.StateAllocated), le.Uint32(rec[countersStateOffset:]))
	require.Equal(t, uint32(countertype.TotalWork), le.Uint32(rec[countersTypeIDOffset:]))
	require.Equal(t, uint64(countersNotFreeToReuse), le.Uint64(rec[countersFreeForReuseDeadlineOffset:]))
	require.Equal(t, byte('k'), rec[countersKeyOffset])
	require.Equal(t, uint32(len("total-work: x")), le.Uint32(rec[countersLabelLengthOffset:]))
	require.Equal(t, "total-work: x", string(rec[countersLabelOffset:countersLabelOffset+len("total-work: x")]))
	require.Equal(t, uint64(77), le.Uint64(vals[1*countersValueRecordLength+countersValueOffset:]))
	require.Equal(t, uint64(c.RegistrationID()), le.Uint64(vals[1*countersValueRecordLength+countersRegistrationIDOffset:]))

	// The default reuse timeout is Aeron's: a freed id is not reused at once.
	require.NoError(t, c.Close())
	after, err := cf.Reader().Record(1)
	require.NoError(t, err)
	require.InDelta(t, time.Now().Add(counters.DefaultFreeToReuseTimeout).UnixMilli(), after.FreeForReuseDeadline, float64(time.Minute.Milliseconds()))
	c2, err := m.Allocate("b", countertype.Errors, nil)
	require.NoError(t, err)
	require.Equal(t, 2, c2.ID())
}

// TestCountersFileBadArguments covers CreateCounters' argument checks and
// OpenCounters on files that are not counters files.
func TestCountersFileBadArguments(t *testing.T) {
	dir := testDir(t)
	_, err := CreateCounters(dir, "zero", 0, nil)
	require.ErrorIs(t, err, ErrArgument)
	require.ErrorIs(t, err, counters.ErrArgument)
	_, err = CreateCounters(dir, "neg", 4, &counters.Config{FreeToReuseTimeout: -time.Second})
	require.ErrorIs(t, err, ErrArgument)
	require.ErrorIs(t, err, counters.ErrArgument)
	_, err = CreateCounters(dir, "a/b", 4, nil)
	require.ErrorIs(t, err, errName)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing left behind")

	cf, err := CreateCounters(dir, "dup", 4, nil)
	require.NoError(t, err)
	defer cf.Close()
	_, err = CreateCounters(dir, "dup", 4, nil)
	require.ErrorIs(t, err, errExists)

	ring, err := CreateRing(dir, "ring", 1024)
	require.NoError(t, err)
	defer ring.Close()
	_, err = OpenCounters(ctxT(t), ring.File.Path())
	require.ErrorIs(t, err, ErrKind)

	// A counters file whose section is not n*640 bytes.
	f, err := create(dir, "odd", KindCounters, []int{1000})
	require.NoError(t, err)
	defer f.Close()
	_, err = OpenCounters(ctxT(t), f.Path())
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorIs(t, err, counters.ErrArgument)

	_, err = OpenCounters(ctxT(t), filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)

	// A file that is not a duty file at all.
	junk := filepath.Join(dir, "junk")
	require.NoError(t, os.WriteFile(junk, append([]byte("NOTDUTY!"), make([]byte, 2*headerLength)...), 0o600))
	_, err = OpenCounters(ctxT(t), junk)
	require.ErrorIs(t, err, ErrNotDutyFile)
}

// TestOpenReadOnly: a read-only File validates like Open, reads what the
// owner writes, is not the owner, faults on a store, and leaves the file's
// bytes and modification time as they were.
func TestOpenReadOnly(t *testing.T) {
	dir := testDir(t)
	cf, err := CreateCounters(dir, "ro", 4, nil)
	require.NoError(t, err)
	defer cf.Close()
	c, err := cf.Manager().Allocate("x", countertype.DutyCycles, nil)
	require.NoError(t, err)
	c.Set(5)
	require.NoError(t, cf.File.Heartbeat(time.Now().UnixMilli()))
	path := cf.File.Path()
	before, err := os.Stat(path)
	require.NoError(t, err)
	sum := fileSum(t, path)

	f, err := OpenReadOnly(ctxT(t), path, withLiveOwner())
	require.NoError(t, err)
	require.False(t, f.IsOwner())
	require.Equal(t, KindCounters, f.Kind())
	require.ErrorIs(t, f.Heartbeat(1), ErrNotOwner)
	require.ErrorIs(t, f.Remove(), ErrNotOwner)
	l, err := f.Liveness(time.Now(), 0)
	require.NoError(t, err)
	require.Equal(t, OwnerAlive, l.State)
	require.Equal(t, os.Getpid(), l.PID)

	b, err := f.Section(0)
	require.NoError(t, err)
	lay, _ := counters.Layout(4)
	meta, vals := b[:lay.MetadataLength], b[lay.ValuesOffset:]
	r, err := counters.NewReader(meta, vals)
	require.NoError(t, err)
	v, err := r.Value(c.ID())
	require.NoError(t, err)
	require.Equal(t, int64(5), v)
	c.Set(6) // the owner's store is visible through the read-only mapping
	v, err = r.Value(c.ID())
	require.NoError(t, err)
	require.Equal(t, int64(6), v)
	c.Set(5)

	err = f.Guard(func() error { b[lay.ValuesOffset] = 1; return nil })
	require.ErrorIs(t, err, ErrFault)
	var fe *faultError
	require.ErrorAs(t, err, &fe)
	require.False(t, fe.Truncated)
	hb, err := f.spareSlotAt(0)
	require.NoError(t, err)
	require.ErrorIs(t, f.Guard(func() error { hb[0] = 1; return nil }), ErrFault)
	require.NoError(t, f.Close())
	require.NoError(t, f.Close(), "idempotent")

	after, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, before.ModTime(), after.ModTime())
	require.Equal(t, sum, fileSum(t, path))

	// The same validation as Open.
	_, err = OpenReadOnly(ctxT(t), filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = OpenReadOnly(ctxT(t), path, withPollInterval(0))
	require.ErrorIs(t, err, ErrArgument)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "short"), []byte{0, 0, 0}, 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = OpenReadOnly(ctx, filepath.Join(dir, "short"))
	require.ErrorIs(t, err, ErrNotReady)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "foreign"), []byte{1, 2, 3}, 0o600))
	_, err = OpenReadOnly(ctxT(t), filepath.Join(dir, "foreign"))
	require.ErrorIs(t, err, ErrNotDutyFile)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o700))
	_, err = OpenReadOnly(ctxT(t), filepath.Join(dir, "sub"))
	require.Error(t, err)
}

// TestOpenReadOnlyWaitsAndChecksOwner: WithWaitForFile waits for a file
// created later; WithLiveOwner refuses a file whose owner closed it.
func TestOpenReadOnlyWaitsAndChecksOwner(t *testing.T) {
	dir := testDir(t)
	path := filepath.Join(dir, "later")
	done := make(chan error, 1)
	ctx := ctxT(t)
	go func() {
		f, err := OpenReadOnly(ctx, path, WithWaitForFile())
		if err == nil {
			err = f.Close()
		}
		done <- err
	}()
	time.Sleep(10 * time.Millisecond) // let the opener start waiting (not required for correctness)
	cf, err := CreateCounters(dir, "later", 2, nil)
	require.NoError(t, err)
	require.NoError(t, <-done)
	require.NoError(t, cf.Close())
	_, err = OpenReadOnly(ctxT(t), path, withLiveOwner())
	require.ErrorIs(t, err, ErrOwnerDead)
	cf2, err := OpenCounters(ctxT(t), path)
	require.NoError(t, err, "without WithLiveOwner a closed file still opens")
	require.NoError(t, cf2.Close())
	require.NoError(t, cf2.Close(), "Close is idempotent")
}

// TestCountersFileNewReader: each goroutine may get its own Reader; after
// Close every way in says ErrClosed.
func TestCountersFileNewReader(t *testing.T) {
	cf, err := CreateCounters(testDir(t), "nr", 3, nil)
	require.NoError(t, err)
	c, err := cf.Manager().Allocate("l", countertype.Errors, nil)
	require.NoError(t, err)
	c.Set(3)
	r, err := cf.newReader()
	require.NoError(t, err)
	require.NotSame(t, cf.Reader(), r)
	v, err := r.Value(c.ID())
	require.NoError(t, err)
	require.Equal(t, int64(3), v)
	require.NoError(t, cf.Close())
	_, err = cf.newReader()
	require.ErrorIs(t, err, ErrClosed)
}

// ExampleCreateCounters: the owner allocates counters in a counters file;
// another process (here the same one) reads them through a read-only
// mapping.
func ExampleCreateCounters() {
	dir, _ := os.MkdirTemp("", "duty-example-")
	defer os.RemoveAll(dir)

	cf, err := CreateCounters(dir, "stats", 64, nil) // 1 s reuse delay, wall clock
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cf.Close()
	c, _ := cf.Manager().Allocate("back-pressure: orders", countertype.BackPressureEvents, nil)
	c.Add(3)
	_ = cf.File.Heartbeat(time.Now().UnixMilli()) // from the owner's duty cycle

	view, err := OpenCounters(context.Background(), cf.File.Path())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer view.Close()
	_ = view.Reader().ForEachRecord(func(rec counters.Record) bool {
		id, typeID, label, value := rec.ID, rec.TypeID, string(rec.Label), rec.Value
		fmt.Println(id, counters.TypeName(typeID), label, value)
		return true
	})
	fmt.Println("read-only:", !view.File.IsOwner())
	// Output:
	// 0 back-pressure back-pressure: orders 3
	// read-only: true
}

// The counters records' layout, from docs/layouts.md (the counters
// package keeps its offsets unexported).
const (
	countersValueRecordLength                = 128
	countersValueOffset                      = 0
	countersRegistrationIDOffset             = 8
	countersMetadataRecordLength             = 512
	countersStateOffset                      = 0
	countersTypeIDOffset                     = 4
	countersFreeForReuseDeadlineOffset       = 8
	countersKeyOffset                        = 16
	countersLabelLengthOffset                = 128
	countersLabelOffset                      = 132
	countersNotFreeToReuse             int64 = 1<<63 - 1
)
