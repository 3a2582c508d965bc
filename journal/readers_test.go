package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/dutyrt/duty/internal/journalfile"
	"github.com/stretchr/testify/require"
)

// recheckEvery sets how long the writer trusts a slot it found alive, for
// one test.
func recheckEvery(t *testing.T, d time.Duration) {
	old := journalfile.ReaderRecheck
	journalfile.ReaderRecheck = d
	t.Cleanup(func() { journalfile.ReaderRecheck = old })
}

// fakeSlot writes slot i by hand, as another process would have: active,
// owned by pid with start identity start, at pos.
func fakeSlot(r *journalfile.Registry, i int, pid uint32, start uint64, pos int64) uint64 {
	_, _, gen := journalfile.SplitClaim(r.Claim(i).Load())
	r.Word(i, journalfile.SlStartOffset).Store(int64(start))
	r.Word(i, journalfile.SlNamespaceOffset).Store(int64(r.Me.NS))
	r.Word(i, journalfile.SlPositionOffset).Store(pos)
	w := journalfile.ClaimWord(pid, journalfile.SlotActive, gen+1)
	r.Claim(i).Store(w)
	hw := journalfile.Word64(r.Mem, journalfile.RdHighWaterOffset)
	if hw.Load() < int64(i+1) {
		hw.Store(int64(i + 1))
	}
	return w
}

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) uint32 {
	p := startChild(t, "nosuchrole")
	_ = p.Cmd.Wait()
	return uint32(p.Cmd.Process.Pid)
}

// A slot is claimed by CAS and freed at Close (its generation moving on
// each time); the slot of a dead process, of a live pid with another start
// identity (a reused pid), or in a state no writer stores is reclaimed; a
// live owner's, ours or one of another pid namespace, never is.
func TestReaderSlotClaimFreeReclaim(t *testing.T) {
	recheckEvery(t, 0)
	j := openT(t, testDir(t), Options{ReaderName: "unit"})
	appendN(t, j, 1, 10)
	r := j.reg
	require.NotNil(t, r)
	me := journalfile.SelfIdentity()
	require.NotZero(t, me.Start, "Linux: /proc/self/stat gives a start identity")

	tl, err := j.NewTailer()
	require.NoError(t, err)
	require.NotNil(t, tl.pub)
	pid, state, gen := journalfile.SplitClaim(r.Claim(tl.slot).Load())
	require.Equal(t, uint32(os.Getpid()), pid)
	require.Equal(t, uint8(journalfile.SlotActive), state)
	require.Equal(t, uint64(me.Start), uint64(r.Word(tl.slot, journalfile.SlStartOffset).Load()))
	_, _, err = tl.Next()
	require.NoError(t, err)
	require.Equal(t, tl.Position(), tl.pub.Load(), "Next publishes its position")
	info, err := journalfile.Inspect(j.dirPath())
	require.NoError(t, err)
	require.Len(t, info.Readers, 1)
	require.Equal(t, journalfile.ReaderInfo{Slot: tl.slot, PID: os.Getpid(), Name: "unit", Position: tl.Position(), Alive: true,
		Registered: info.Readers[0].Registered, Updated: info.Readers[0].Updated}, info.Readers[0])
	slot, word := tl.slot, tl.word
	require.NoError(t, tl.Close())
	_, state, gen2 := journalfile.SplitClaim(r.Claim(slot).Load())
	require.Equal(t, uint8(journalfile.SlotFree), state)
	require.Equal(t, gen+1, gen2)
	require.False(t, r.Free(slot, word), "a stale claim word frees nothing")

	// Hand-written slots, as other processes leave them.
	first := j.firstPosition()
	dead := deadPID(t)
	cases := []struct {
		name  string
		pid   uint32
		start uint64
		alive bool
	}{
		{"ours", uint32(me.PID), me.Start, true},
		{"ours, start unknown", uint32(me.PID), 0, true},
		{"our pid reused: another start identity", uint32(me.PID), me.Start + 1, false},
		{"parent, alive", uint32(os.Getppid()), 0, true},
		{"parent's pid, another start identity", uint32(os.Getppid()), 1, false},
		{"dead process", dead, 0, false},
		{"pid 0", 0, 0, false},
	}
	for i, c := range cases {
		w := fakeSlot(r, i, c.pid, c.start, first)
		require.Equal(t, c.alive, r.Verify(i, w, false), c.name)
		_, state, _ := journalfile.SplitClaim(r.Claim(i).Load())
		if c.alive {
			require.Equal(t, uint8(journalfile.SlotActive), state, c.name)
		} else {
			require.Equal(t, uint8(journalfile.SlotFree), state, "%s: reclaimed", c.name)
		}
		r.Free(i, w)
	}
	// Another pid namespace: never judged, so never reclaimed.
	w := fakeSlot(r, 0, dead, 0, first)
	r.Word(0, journalfile.SlNamespaceOffset).Store(int64(me.NS) + 1)
	require.True(t, r.Verify(0, w, false))
	r.Free(0, w)
	// A state no writer stores.
	r.Claim(1).Store(journalfile.ClaimWord(uint32(me.PID), 9, 1))
	r.ReclaimDead()
	_, state, _ = journalfile.SplitClaim(r.Claim(1).Load())
	require.Equal(t, uint8(journalfile.SlotFree), state)
	// A claiming slot: its identity fields may still be the last owner's
	// (here: our pid with another start identity, which would read as a
	// reused pid), so it is judged by time alone: reclaimed only once the
	// same claim word has stayed claiming for ClaimTimeout.
	oldTimeout := journalfile.ClaimTimeout
	t.Cleanup(func() { journalfile.ClaimTimeout = oldTimeout })
	journalfile.ClaimTimeout = time.Hour
	w = journalfile.ClaimWord(uint32(me.PID), journalfile.SlotClaiming, 50)
	r.Claim(3).Store(w)
	r.Word(3, journalfile.SlStartOffset).Store(int64(me.Start) + 1)
	require.True(t, r.Verify(3, w, false), "first seen")
	require.True(t, r.Verify(3, w, true), "within claimTimeout")
	r.ReclaimDead()
	require.Equal(t, w, r.Claim(3).Load())
	journalfile.ClaimTimeout = 0
	w2 := journalfile.ClaimWord(uint32(me.PID), journalfile.SlotClaiming, 51) // claimed anew meanwhile: watched from the start again
	r.Claim(3).Store(w2)
	require.True(t, r.Verify(3, w2, false))
	require.False(t, r.Verify(3, w2, false), "the same claim, claiming past claimTimeout")
	_, state, _ = journalfile.SplitClaim(r.Claim(3).Load())
	require.Equal(t, uint8(journalfile.SlotFree), state)
	journalfile.ClaimTimeout = oldTimeout

	// A reclaimer that read the slot before it changed hands frees nothing.
	w = fakeSlot(r, 2, dead, 0, first)
	fakeSlot(r, 2, uint32(me.PID), me.Start, first)
	require.False(t, r.Free(2, w))
	require.Equal(t, uint32(me.PID), uint32(r.Claim(2).Load()))
}

// A full registry: a read-only journal's NewTailer gets ErrReadersFull once
// every slot is held by a live reader, and a slot again once one is freed
// or found dead; the writer's Tailer goes on without a slot.
func TestReaderRegistryFull(t *testing.T) {
	recheckEvery(t, 0)
	dir := testDir(t)
	j := openT(t, dir, Options{})
	appendN(t, j, 1, 10)
	ro := openT(t, dir, Options{ReadOnly: true})
	r := j.reg
	words := make([]uint64, r.Slots)
	me := journalfile.SelfIdentity()
	for i := range r.Slots {
		words[i] = fakeSlot(r, i, uint32(me.PID), me.Start, j.firstPosition())
	}
	_, err := ro.NewTailer()
	require.ErrorIs(t, err, ErrReadersFull)
	wt, err := j.NewTailer()
	require.NoError(t, err, "the writer's Tailer needs no slot")
	require.Nil(t, wt.pub)
	j.publishStatus()
	info, err := journalfile.Inspect(dir)
	require.NoError(t, err)
	require.Equal(t, int64(r.Slots+1), info.Status.Tailers)
	require.Equal(t, r.Slots, info.LiveReaders())

	r.Word(7, journalfile.SlStartOffset).Store(int64(me.Start) + 1) // slot 7's owner "died"; its pid was reused
	tl, err := ro.NewTailer()
	require.NoError(t, err)
	require.Equal(t, 7, tl.slot)
	require.NoError(t, tl.Close())
	require.NoError(t, wt.Close())
}

// A registered reader of another Journal of this process (which the
// writer knows only through the registry) holds retention back until it
// moves on or closes; past the hard limit its next Next is
// ErrBehindRetention.
func TestRetentionWaitsForARegistrySlot(t *testing.T) {
	dir := testDir(t)
	j := openT(t, dir, Options{RetainBytes: 2 * testSegment, HardLimitBytes: 8 * testSegment})
	appendN(t, j, 1, 1)
	ro := openT(t, dir, Options{ReadOnly: true})
	tl, err := ro.NewTailer()
	require.NoError(t, err)
	appendN(t, j, 1, 1800) // about six segments
	res, err := j.ApplyRetention()
	require.NoError(t, err)
	require.Zero(t, res.Deleted)
	for range 1000 {
		_, ok, err := tl.Next()
		require.NoError(t, err)
		require.True(t, ok)
	}
	res, err = j.ApplyRetention()
	require.NoError(t, err)
	require.Positive(t, res.Deleted)
	require.Equal(t, j.segmentStart(tl.Position()-1)+journalfile.SegmentHeaderLength, j.firstPosition(), "cut at the reader's segment")
	require.NoError(t, tl.Close())
	res, err = j.ApplyRetention()
	require.NoError(t, err)
	require.Equal(t, 2, j.Stats().Segments)

	// A new reader starts at the oldest segment; the writer runs past the
	// hard limit under it.
	tl, err = ro.NewTailer()
	require.NoError(t, err)
	require.Equal(t, j.firstPosition(), tl.Position())
	_, _, err = tl.Next()
	require.NoError(t, err)
	appendN(t, j, 1, 2500)
	res, err = j.ApplyRetention()
	require.NoError(t, err)
	require.Positive(t, res.Forced)
	_, _, err = tl.Next()
	require.ErrorIs(t, err, ErrBehindRetention)
	require.ErrorIs(t, err, ErrReleased)
	require.ErrorIs(t, tl.SeekPosition(journalfile.SegmentHeaderLength), ErrBehindRetention)
	require.NoError(t, tl.SeekStart(), "the oldest record still there")
	require.Equal(t, j.firstPosition(), tl.Position())
	r, ok, err := tl.Next()
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, j.firstPosition(), r.Position)
	require.LessOrEqual(t, len(ro.Segments()), j.Stats().Segments+1, "the reader let go of deleted segments")
	require.NoError(t, tl.Close())
}

// Tailer.Next of a read-only journal, registered, allocates nothing either.
func TestRegisteredReaderNextDoesNotAllocate(t *testing.T) {
	dir := testDir(t)
	j := openT(t, dir, Options{SegmentSize: 1 << 20})
	for range 1100 {
		_, _, err := j.Append(1, 1, make([]byte, 32))
		require.NoError(t, err)
	}
	ro := openT(t, dir, Options{ReadOnly: true, SegmentSize: 1 << 20})
	tl, err := ro.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	require.NotNil(t, tl.pub)
	_, _, err = tl.Next()
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(1000, func() {
		if _, ok, err := tl.Next(); !ok || err != nil {
			panic(fmt.Sprint("no record: ", err))
		}
	})
	require.Zero(t, allocs)
	require.Equal(t, tl.Position(), tl.pub.Load())
}

// A damaged registry: a read-only Open and a strict writer's Open fail
// with ErrCorrupt naming it; a writer in another recovery mode replaces
// it, and says so.
func TestDamagedRegistry(t *testing.T) {
	dir := testDir(t)
	j := openT(t, dir, Options{})
	appendN(t, j, 1, 3)
	require.NoError(t, j.Close())
	path := filepath.Join(dir, journalfile.ReadersName)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	for name, bad := range map[string][]byte{
		"short":       b[:100],
		"long":        append(append([]byte(nil), b...), 0),
		"bad magic":   append([]byte("XXXXXXXX"), b[8:]...),
		"bad version": func() []byte { c := append([]byte(nil), b...); c[8] = 2; return c }(),
		"garbage":     make([]byte, len(b)),
	} {
		require.NoError(t, os.WriteFile(path, bad, 0o644))
		_, err := Open(dir, Options{ReadOnly: true})
		require.ErrorIs(t, err, ErrCorrupt, name)
		require.ErrorContains(t, err, journalfile.ReadersName, name)
		_, err = Open(dir, Options{SegmentSize: testSegment, Logger: quiet})
		require.ErrorIs(t, err, ErrCorrupt, name)
		_, err = journalfile.Inspect(dir)
		require.ErrorIs(t, err, ErrCorrupt, name)
	}
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Mkdir(path, 0o755))
	_, err = Open(dir, Options{ReadOnly: true})
	require.ErrorIs(t, err, ErrCorrupt, "a directory")
	_, err = journalfile.Inspect(dir)
	require.ErrorIs(t, err, ErrCorrupt, "a directory")
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.WriteFile(path, []byte("garbage"), 0o644))
	j = openT(t, dir, Options{Recovery: RecoverSkip})
	require.ErrorIs(t, j.Recovery().ReadersReplaced, ErrCorrupt)
	require.Contains(t, j.Recovery().String(), "reader registry replaced")
	tl, err := j.NewTailer()
	require.NoError(t, err)
	require.NotNil(t, tl.pub)
	require.NoError(t, tl.Close())

	// Garbage in one slot: Inspect reports it (ErrCorrupt, naming the
	// slot) with the valid slots; the writer reclaims it.
	tl, err = j.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	j.reg.Claim(5).Store(journalfile.ClaimWord(1, 77, 3))
	journalfile.Word64(j.reg.Mem, journalfile.RdHighWaterOffset).Store(6)
	info, err := journalfile.Inspect(dir)
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorContains(t, err, "slot 5")
	require.Len(t, info.Readers, 1)
	j.reg.ReclaimDead()
	_, err = journalfile.Inspect(dir)
	require.NoError(t, err)

	// A retention floor that is no segment start, or past any log: a
	// reader's NewTailer says so, and neither loops nor panics.
	ro := openT(t, dir, Options{ReadOnly: true})
	for _, f := range []int64{12345, 1<<63 - 1, journalfile.MaxPosition + testSegment} {
		j.reg.Proposed().Store(f)
		_, err := ro.NewTailer()
		require.ErrorIs(t, err, ErrCorrupt, "floor %d", f)
	}
	j.reg.Proposed().Store(0)
	require.Zero(t, j.reg.Active()-1, "the failed Tailers freed their slots")
}

// Several readers, each in a read-only Journal of its own (so the writer
// knows them only through the registry), register and unregister over
// and over while the writer appends and applies retention: every session
// reads its records exactly once, in order, and retention deletes
// segments meanwhile. Without a hard limit no reader is ever cut; with
// one, a stalled reader is, and its next Next says so
// (ErrBehindRetention), as does that of any other reader forced behind,
// whose session then ends: none ever reads a record out of order.
func TestReadersRegisterWhileRetentionRuns(t *testing.T) {
	for _, hard := range []bool{false, true} {
		t.Run(fmt.Sprintf("hard limit %t", hard), func(t *testing.T) {
			const readers = 4
			n := soak(12000)
			dir := testDir(t)
			o := Options{RetainBytes: 3 * testSegment}
			if hard {
				o.HardLimitBytes = 6 * testSegment
			}
			j := openT(t, dir, o)
			appendN(t, j, 1, 1)
			var wg sync.WaitGroup
			errs := make(chan error, readers+1)
			done, cut := make(chan struct{}), make(chan struct{})
			for g := range readers {
				ro := openT(t, dir, Options{ReadOnly: true, ReaderName: "stress-" + strconv.Itoa(g)})
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs <- stressReader(ro, g, done, hard)
				}()
			}
			if hard { // the stalled reader: registered at the start, reading nothing until cut
				ro := openT(t, dir, Options{ReadOnly: true, ReaderName: "stalled"})
				tl, err := ro.NewTailer()
				require.NoError(t, err)
				wg.Add(1)
				cutCh := cut
				go func() {
					defer wg.Done()
					defer tl.Close()
					<-cutCh
					_, _, err := tl.Next()
					if !errors.Is(err, ErrBehindRetention) {
						err = fmt.Errorf("stalled reader after a forced cut: %v", err)
					} else {
						err = nil
					}
					errs <- err
				}()
			}
			// n records at least, then on (slowly) until retention has
			// deleted a segment while the readers read: readers slowed
			// down (-race, a busy machine) hold the oldest segments for
			// longer than the n appends take.
			deadline := time.Now().Add(time.Minute)
			for i := 0; i < n || j.Stats().DeletedSegments == 0 && time.Now().Before(deadline); i++ {
				if i >= n {
					time.Sleep(100 * time.Microsecond)
				}
				appendN(t, j, 1, 1)
				if i%40 == 0 {
					_, err := j.ApplyRetention()
					require.NoError(t, err)
					if hard && j.Stats().ForcedDeletions > 0 && cut != nil {
						close(cut)
						cut = nil
					}
				}
			}
			forcedCut := cut == nil
			if cut != nil {
				close(cut) // (no forced cut: the stalled reader fails rather than waits)
			}
			close(done)
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			require.Positive(t, j.Stats().DeletedSegments)
			if hard {
				require.True(t, forcedCut, "a forced cut happened")
			} else {
				require.Zero(t, j.Stats().ForcedDeletions)
			}
			require.Zero(t, j.reg.Active(), "every slot freed")
		})
	}
}

// stressReader runs sessions: register, read a number of records (each
// the next sequence after the first it read), sometimes seek back to the
// session's first record and read it again (or, if retention has cut
// behind the reader since, get ErrBehindRetention and start over at the
// oldest), close. Most sessions resume where the last one stopped; every
// fourth starts at the oldest record. With hard, a session that Next
// finds forced behind retention ends there.
func stressReader(ro *Journal, g int, done <-chan struct{}, hard bool) error {
	resume := int64(-1)
	for session := 0; ; session++ {
		select {
		case <-done:
			return nil
		default:
		}
		tl, err := ro.NewTailer()
		if err != nil {
			return err
		}
		if session%4 != 0 && resume >= 0 { // resume where the last session stopped, if still there
			if err := tl.SeekPosition(resume); errors.Is(err, ErrBehindRetention) {
				if err := tl.SeekStart(); err != nil {
					tl.Close()
					return fmt.Errorf("reader %d session %d: from the start: %w", g, session, err)
				}
			} else if err != nil {
				tl.Close()
				return fmt.Errorf("reader %d session %d: resume at %d: %w", g, session, resume, err)
			}
		}
		firstPos, next := int64(-1), int64(-1)
		want := 50 + (g*37+session*101)%700
		for got := 0; got < want; {
			r, ok, err := tl.Next()
			if hard && errors.Is(err, ErrBehindRetention) {
				break // forced behind: the session ends, the next one starts where it can
			}
			if err != nil {
				tl.Close()
				return fmt.Errorf("reader %d session %d after %d records: %w", g, session, got, err)
			}
			if !ok {
				select {
				case <-done:
					return tl.Close()
				default:
				}
				time.Sleep(20 * time.Microsecond)
				continue
			}
			if next >= 0 && r.Sequence != next {
				tl.Close()
				return fmt.Errorf("reader %d session %d: sequence %d, want %d", g, session, r.Sequence, next)
			}
			if err := checkBody(r.Body, r.StreamID, r.Sequence); err != nil {
				tl.Close()
				return err
			}
			if firstPos < 0 {
				firstPos = r.Position
			}
			next = r.Sequence + 1
			got++
			if got == want/2 && session%3 == 0 { // back to where the session began, if still there
				err := tl.SeekPosition(firstPos)
				if errors.Is(err, ErrBehindRetention) { // the reader had moved on: retention may cut behind it
					if err := tl.SeekStart(); err != nil {
						tl.Close()
						return err
					}
					firstPos, next = -1, -1
					continue
				}
				if err != nil {
					tl.Close()
					return fmt.Errorf("reader %d session %d: seek back: %w", g, session, err)
				}
				r, _, err := tl.Next()
				if err != nil || r.Position != firstPos {
					tl.Close()
					return fmt.Errorf("reader %d session %d: after seeking back: %d, %v", g, session, r.Position, err)
				}
				next = r.Sequence + 1
			}
		}
		resume = tl.Position()
		if err := tl.Close(); err != nil {
			return err
		}
	}
}

// A reader in another process: the segments it has yet to read are kept;
// once it reads on they go; once it is SIGKILLed its slot is reclaimed as
// dead and retention proceeds. Past the hard limit, a second reader's
// next Next is ErrBehindRetention.
func TestRetentionWaitsForAReaderInAnotherProcess(t *testing.T) {
	recheckEvery(t, 0)
	dir := testDir(t)
	j := openT(t, dir, Options{RetainBytes: 2 * testSegment, HardLimitBytes: 12 * testSegment})
	appendN(t, j, 1, 1)
	startReader := func() (*proc, func(string) int64) {
		p := startChild(t, "registered", "DUTY_JOURNAL_DIR="+dir)
		send := func(cmd string) int64 {
			if cmd != "" {
				_, err := fmt.Fprintln(p.Stdin, cmd)
				require.NoError(t, err)
			}
			line := p.Next()
			pos, err := strconv.ParseInt(strings.TrimPrefix(line, "at "), 10, 64)
			require.NoError(t, err, "line %q, stderr %s", line, p.Stderr)
			return pos
		}
		send("") // registered
		return p, send
	}
	segmentsFrom := func(pos int64) {
		t.Helper()
		first := j.segmentStart(pos - 1)
		require.Equal(t, first+journalfile.SegmentHeaderLength, j.firstPosition(), "oldest segment: the reader's")
		for s := first; s < j.CommittedPosition(); s += testSegment {
			_, err := os.Stat(filepath.Join(dir, journalfile.SegmentName(s)))
			require.NoError(t, err)
		}
	}
	p, send := startReader()
	appendN(t, j, 1, 99)
	p1 := send("read 100")
	appendN(t, j, 1, 2400)
	require.Greater(t, j.Stats().Segments, 6)
	res, err := j.ApplyRetention()
	require.NoError(t, err)
	require.Zero(t, res.Deleted, "the reader is in the first segment")
	segmentsFrom(p1)

	j.publishStatus()
	info, err := journalfile.Inspect(dir)
	require.NoError(t, err)
	require.Len(t, info.Readers, 1)
	rd := info.Readers[0]
	require.Equal(t, p.Cmd.Process.Pid, rd.PID)
	require.Equal(t, "child-reader", rd.Name)
	require.Equal(t, p1, rd.Position)
	require.Equal(t, j.CommittedPosition()-p1, rd.Lag)
	require.True(t, rd.Alive)
	require.Equal(t, int64(1), info.Status.Tailers)

	p2 := send("read 1500")
	res, err = j.ApplyRetention()
	require.NoError(t, err)
	require.Positive(t, res.Deleted)
	segmentsFrom(p2)
	require.Greater(t, j.Stats().Segments, 2, "held back by the reader")

	p.Kill(t)
	res, err = j.ApplyRetention()
	require.NoError(t, err)
	require.Positive(t, res.Deleted)
	require.Equal(t, 2, j.Stats().Segments, "the dead reader's slot holds nothing")
	require.Zero(t, j.reg.Active())
	info, err = journalfile.Inspect(dir)
	require.NoError(t, err)
	require.Empty(t, info.Readers)

	// Past the hard limit.
	p, send = startReader()
	p3 := send("read 10")
	appendN(t, j, 1, 3800) // about twelve segments more
	res, err = j.ApplyRetention()
	require.NoError(t, err)
	require.Positive(t, res.Forced)
	require.Greater(t, j.firstPosition(), p3)
	_, err = fmt.Fprintln(p.Stdin, "next")
	require.NoError(t, err)
	require.Equal(t, "behind", p.Next(), "stderr: %s", p.Stderr)
	p.Kill(t)
}

// The registry decoder over hand-made slots: what it accepts and refuses.
func TestDecodeReaders(t *testing.T) {
	b := make([]uint64, (journalfile.ReadersHeaderLength+4*journalfile.ReaderSlotLength)/8)
	raw := unsafeBytes(b)
	journalfile.PutReadersHeader(raw, 4)
	me := journalfile.SelfIdentity()
	r := &journalfile.Registry{Mem: raw, Slots: 4, Me: me}
	fakeSlot(r, 0, uint32(me.PID), me.Start, 4096)
	binary.LittleEndian.PutUint32(raw[r.SlotOff(0)+journalfile.SlNameLenOffset:], 3)
	copy(raw[r.SlotOff(0)+journalfile.SlNameOffset:], "abc")
	out, err := journalfile.DecodeReaders(raw, me)
	require.NoError(t, err)
	require.Len(t, out, 1)
	require.Equal(t, "abc", out[0].Name)
	require.True(t, out[0].Alive)

	for name, mutate := range map[string]func(){
		"name too long": func() {
			binary.LittleEndian.PutUint32(raw[r.SlotOff(1)+journalfile.SlNameLenOffset:], journalfile.MaxReaderName+1)
		},
		"negative position":  func() { r.Word(1, journalfile.SlPositionOffset).Store(-8) },
		"unaligned position": func() { r.Word(1, journalfile.SlPositionOffset).Store(4097) },
		"pid 0":              func() { r.Claim(1).Store(journalfile.ClaimWord(0, journalfile.SlotActive, 1)) },
		"unknown state":      func() { r.Claim(1).Store(journalfile.ClaimWord(5, 3, 1)) },
		"high water past end": func() {
			journalfile.Word64(raw, journalfile.RdHighWaterOffset).Store(1000)
			r.Claim(3).Store(journalfile.ClaimWord(5, 4, 1))
		},
	} {
		fakeSlot(r, 1, uint32(me.PID), me.Start, 4096)
		binary.LittleEndian.PutUint32(raw[r.SlotOff(1)+journalfile.SlNameLenOffset:], 0)
		journalfile.Word64(raw, journalfile.RdHighWaterOffset).Store(2)
		r.Claim(3).Store(0)
		mutate()
		out, err := journalfile.DecodeReaders(raw, me)
		require.ErrorIs(t, err, ErrCorrupt, name)
		require.NotEmpty(t, out, name)
		require.Equal(t, "abc", out[0].Name, name)
	}
	_, err = journalfile.DecodeReaders(raw[:journalfile.ReadersHeaderLength+journalfile.ReaderSlotLength], me)
	require.ErrorIs(t, err, ErrCorrupt, "length disagrees with the header")
	require.True(t, errors.Is(err, ErrCorrupt))
}

// unsafeBytes views w as bytes: an 8-byte aligned buffer, as a mapping is.
func unsafeBytes(w []uint64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), len(w)*8)
}

// A reader that registers while retention runs, between its proposal and
// its second scan: either the reader sees the proposal and starts after
// the cut (NewTailer), or the second scan sees the reader (one whose
// position was stored before the proposal, unseen by the first scan) and
// the cut stops at its segment. Both orders of the store-load pattern,
// deterministically.
func TestRetentionRacingARegistration(t *testing.T) {
	dir := testDir(t)
	j := openT(t, dir, Options{RetainBytes: 2 * testSegment})
	appendN(t, j, 1, 1800)
	ro := openT(t, dir, Options{ReadOnly: true})
	first := j.firstPosition()

	// The reader registers after the proposal: it sees it and moves on.
	var tl *Tailer
	testHookBetweenScans = func() {
		var err error
		tl, err = ro.NewTailer()
		require.NoError(t, err)
	}
	defer func() { testHookBetweenScans = nil }()
	res, err := j.ApplyRetention()
	require.NoError(t, err)
	require.Positive(t, res.Deleted)
	require.Equal(t, j.firstPosition(), tl.Position(), "the reader starts after the cut")
	_, ok, err := tl.Next()
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, tl.Close())

	// A reader whose position was stored before the proposal but after
	// the first scan: the second scan sees it.
	appendN(t, j, 1, 1800)
	first = j.firstPosition()
	me := journalfile.SelfIdentity()
	testHookBetweenScans = func() { fakeSlot(j.reg, 0, uint32(me.PID), me.Start, first) }
	res, err = j.ApplyRetention()
	require.NoError(t, err)
	require.Zero(t, res.Deleted, "held by the reader the second scan found")
	require.Equal(t, first, j.firstPosition())
	require.Equal(t, j.segmentStart(first), j.reg.Floor().Load())
}

// A read-only journal follows the writer's retention: its table lets go
// of deleted segments and starts again at the floor, where every Tailer
// of it still finds the oldest record; without a registry, a Tailer whose
// next segment file was deleted gets ErrBehindRetention, never a wait for
// a segment that will not come.
func TestReadOnlyTableFollowsRetention(t *testing.T) {
	dir := testDir(t)
	j := openT(t, dir, Options{RetainBytes: 2 * testSegment})
	appendN(t, j, 1, 1)
	ro := openT(t, dir, Options{ReadOnly: true}) // maps segment 0 only
	bare := openT(t, dir, Options{ReadOnly: true})
	require.NoError(t, bare.closeReaders()) // a reader without the registry
	old, err := bare.NewTailer()
	require.NoError(t, err)
	require.Nil(t, old.floor)
	_, ok, err := old.Next()
	require.NoError(t, err)
	require.True(t, ok)
	appendN(t, j, 1, 1800) // about six segments
	res, err := j.ApplyRetention()
	require.NoError(t, err)
	require.Positive(t, res.Deleted)
	floor := j.firstPosition()

	a, err := ro.NewTailer()
	require.NoError(t, err)
	require.Equal(t, floor, a.Position(), "starts after the cut")
	require.NoError(t, a.SeekPosition(j.segmentStart(floor)+testSegment+journalfile.SegmentHeaderLength))
	_, ok, err = a.Next() // maps the segment after the floor's first
	require.NoError(t, err)
	require.True(t, ok)
	b, err := ro.NewTailer()
	require.NoError(t, err)
	r, ok, err := b.Next()
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, floor, r.Position)
	require.Equal(t, j.segmentStart(floor), ro.Segments()[0].Start, "the deleted segment's mapping is let go")
	require.NoError(t, a.Close())
	require.NoError(t, b.Close())

	for {
		_, ok, err := old.Next()
		if err != nil {
			require.ErrorIs(t, err, ErrBehindRetention)
			break
		}
		require.True(t, ok, "never 'nothing yet' for a deleted segment")
	}
	require.NoError(t, old.Close())
}

// A writer killed inside roll, after the next segment file got its name
// and before the end-of-segment marker: a reader in another process that
// opens the journal then maps that empty file; the recovering writer
// removes it and a later roll makes a new file under the same name. The
// reader notices the replaced file (its identity, not only its name) and
// reads on, through Next and through SeekTime.
func TestReaderFollowsASegmentReplacedAfterACrashedRoll(t *testing.T) {
	dir := testDir(t)
	p := startChild(t, "rollkill", "DUTY_JOURNAL_DIR="+dir)
	line := p.Next()
	next, err := strconv.ParseInt(strings.TrimPrefix(line, "rolling "), 10, 64)
	require.NoError(t, err, "line %q, stderr %s", line, p.Stderr)
	stale, err := os.Stat(filepath.Join(dir, journalfile.SegmentName(next)))
	require.NoError(t, err, "the next segment is in place")

	// Two readers (this process) open while the writer is stopped in its
	// roll; one reads to the tail.
	r := openT(t, dir, Options{ReadOnly: true})
	rs := openT(t, dir, Options{ReadOnly: true})
	tl, err := r.NewTailer()
	require.NoError(t, err)
	defer tl.Close()
	read := readUntilNone(t, tl, nil)
	require.NotEmpty(t, read)
	require.Len(t, r.Segments(), 2, "the reader mapped the empty next segment")
	require.Len(t, rs.Segments(), 2)
	// A third waits at the empty segment's first slot.
	rw := openT(t, dir, Options{ReadOnly: true})
	tw, err := rw.NewTailer()
	require.NoError(t, err)
	defer tw.Close()
	require.NoError(t, tw.SeekPosition(next+journalfile.SegmentHeaderLength))
	_, waiting, err := tw.Next()
	require.NoError(t, err)
	require.False(t, waiting)
	p.Kill(t)

	// The recovering writer removes the empty segment, then rolls into a
	// new file of the same name.
	w := openT(t, dir, Options{})
	require.Len(t, w.Recovery().RemovedSegments, 1, w.Recovery().String())
	appendN(t, w, 1, 600)
	require.Greater(t, w.CommittedPosition(), next+journalfile.SegmentHeaderLength)
	fresh, err := os.Stat(filepath.Join(dir, journalfile.SegmentName(next)))
	require.NoError(t, err)
	require.False(t, os.SameFile(stale, fresh), "a new file under the same name")
	total := w.nextSequence(1)

	// SeekTime to the last record (in the new segment), by a reader whose
	// table holds the removed file: it lands on that record.
	wt, err := w.NewTailer()
	require.NoError(t, err)
	defer wt.Close()
	require.NoError(t, wt.SeekSequence(1, total-1))
	last, ok, err := wt.Next()
	require.NoError(t, err)
	require.True(t, ok)
	require.GreaterOrEqual(t, last.Position, next)
	ts, err := rs.NewTailer()
	require.NoError(t, err)
	defer ts.Close()
	require.NoError(t, ts.SeekTime(last.Timestamp))
	got, ok, err := ts.Next()
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, last.Timestamp, got.Timestamp)
	require.GreaterOrEqual(t, got.Position, next, "found in the new segment")

	// The one waiting at the first slot finds the new file within 256
	// polls (a stat each 256), and its first record.
	for i := 0; ; i++ {
		require.Less(t, i, 256, "the waiting reader did not notice the new file")
		r, ok, err := tw.Next()
		require.NoError(t, err)
		if ok {
			require.Equal(t, next+journalfile.SegmentHeaderLength, r.Position)
			break
		}
	}

	// The reader at the tail reads on, into the new segment.
	read = readUntilNone(t, tl, read)
	require.Equal(t, total, int64(len(read)), "the reader read every record, the new segment's too")
}

// readUntilNone reads with tl until Next reports nothing more, checking
// each body, and returns the sequences read appended to seen.
func readUntilNone(t *testing.T, tl *Tailer, seen []int64) []int64 {
	t.Helper()
	for {
		r, ok, err := tl.Next()
		require.NoError(t, err)
		if !ok {
			return seen
		}
		require.NoError(t, checkBody(r.Body, r.StreamID, r.Sequence))
		require.Equal(t, int64(len(seen)), r.Sequence)
		seen = append(seen, r.Sequence)
	}
}
