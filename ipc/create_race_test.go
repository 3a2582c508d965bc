package ipc

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/dutyrt/duty/clock"
)

// Create must not fail with an unclassified error because a cleaner
// (RemoveIfStale / Cleanup / another creator's WithReplaceStale) inspected
// the new file between Create's open(O_EXCL) and its flock. Bounded by
// raceRounds.
func TestCreateRacesCleaner(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "race")
	// a cleaner, as Cleanup or a WithReplaceStale creator runs it
	runCleaner(t, func() { _ = RemoveIfStale(path) })
	n := 0
	for rounds := raceRounds(1000); rounds.more(); n++ {
		f, err := create(dir, "race", kindUserMin, []int{8}, withDirectCreate())
		if err != nil {
			t.Fatalf("attempt %d: Create of a free name failed because a cleaner looked at it: %v (ErrExists=%t ErrOwnerAlive=%t EWOULDBLOCK=%t)",
				n, err, errors.Is(err, errExists), errors.Is(err, ErrOwnerAlive), errors.Is(err, unix.EWOULDBLOCK))
		}
		require.NoError(t, f.Remove())
		require.NoError(t, f.Close())
	}
	t.Logf("%d attempts without a failure", n)
}

// docs/ipc.md: "Of two processes creating the same name at the same
// instant, exactly one wins and the other gets ErrExists ... in both
// modes." With WithReplaceStale (a restarted owner's usual call) the loser
// inspects the winner's file, perhaps before the winner has locked it: one
// of them must still win. Bounded by raceRounds.
func TestTwoReplaceStaleCreatorsOneWins(t *testing.T) {
	dir := t.TempDir()
	for i, rounds := 0, raceRounds(2000); rounds.more(); i++ {
		var wg sync.WaitGroup
		var files [2]*File
		var errs [2]error
		start := make(chan struct{})
		for j := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				files[j], errs[j] = create(dir, "both", kindUserMin, []int{8}, withDirectCreate(), WithReplaceStale())
			}()
		}
		close(start)
		wg.Wait()
		won := 0
		for j := range 2 {
			if errs[j] == nil {
				won++
				require.NoError(t, files[j].Remove())
				require.NoError(t, files[j].Close())
			}
		}
		if won == 0 {
			t.Fatalf("attempt %d: neither creator won:\n  %v\n  %v", i, errs[0], errs[1])
		}
		_ = os.Remove(filepath.Join(dir, "both"))
	}
}

// A cleaner with a short liveness timeout (1 ms here; file times are
// kernel-tick coarse, so a fresh file can already look a few ms old) must
// not make Create return success for a path that does not name its file
// (the cleaner removed the 0-byte file Create had just made and not yet
// locked). Bounded by raceRounds.
func TestCreateNeverReturnsUnlinkedFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gone")
	ahead := WithLivenessTimeout(time.Millisecond)
	runCleaner(t, func() { _ = RemoveIfStale(path, ahead) })
	n := 0
	for rounds := raceRounds(1000); rounds.more(); n++ {
		f, err := create(dir, "gone", kindUserMin, []int{8}, withDirectCreate())
		if err != nil {
			continue // the lock failure of TestCreateRacesCleaner
		}
		var st unix.Stat_t
		serr := unix.Stat(path, &st)
		same := serr == nil && st.Ino == f.ino && uint64(st.Dev) == f.dev
		_ = f.Remove()
		require.NoError(t, f.Close())
		if !same {
			t.Fatalf("attempt %d: Create succeeded but %s does not name its file (stat: %v)", n, path, serr)
		}
	}
	t.Logf("%d attempts", n)
}

// setAfterCreateOpen installs a hook between Create's open(O_EXCL) and its
// flock for the rest of the test. Nested Creates (from the hook) skip it.
func setAfterCreateOpen(t *testing.T, fn func(target string)) {
	var in bool
	afterCreateOpen = func(target string) {
		if in {
			return
		}
		in = true
		defer func() { in = false }()
		fn(target)
	}
	t.Cleanup(func() { afterCreateOpen = nil })
}

// farClock is a cleaner's clock an hour ahead: every unlocked file that is
// still being created looks abandoned to it, however young.
func farClock() Option {
	return WithClock(clock.Func(func() time.Time { return time.Now().Add(time.Hour) }))
}

// requireNames: path names f's inode.
func requireNames(t *testing.T, path string, f *File) {
	t.Helper()
	var st unix.Stat_t
	require.NoError(t, unix.Lstat(path, &st))
	require.Equal(t, f.ino, st.Ino, "%s names another inode", path)
	require.Equal(t, f.dev, uint64(st.Dev))
}

func createModes() map[string][]Option {
	return map[string][]Option{"link": nil, "direct": {withDirectCreate()}}
}

// A cleaner that removes the new, empty file before Create has locked it
// (here: one whose clock is an hour ahead, so the 1 s minimum age does not
// protect the file) makes Create create the name again, and the File it
// returns is the one the path names. In the default mode the removed file
// is the temporary one.
func TestCreateAgainAfterCleanerRemovedNewFile(t *testing.T) {
	for mode, opts := range createModes() {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			var removed []string
			setAfterCreateOpen(t, func(target string) {
				if len(removed) == 0 {
					require.NoError(t, RemoveIfStale(target, farClock()))
					removed = append(removed, filepath.Base(target))
				}
			})
			f, err := create(dir, "again", kindUserMin, []int{8}, opts...)
			require.NoError(t, err)
			defer f.Close()
			require.Len(t, removed, 1)
			requireNames(t, filepath.Join(dir, "again"), f)
			o, err := open(ctxT(t), filepath.Join(dir, "again"), withLiveOwner())
			require.NoError(t, err)
			require.NoError(t, o.Close())
			ents, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, ents, 1, "no temporary file left")
		})
	}
}

// A cleaner removes the new file before Create has locked it and a third
// creator takes the name at once: Create gets ErrExists (ErrOwnerAlive with
// WithReplaceStale: the third file's owner is alive) and leaves the third
// file alone.
func TestCreateLosesNameTakenWhileUnlocked(t *testing.T) {
	for _, replace := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "replace-stale"}[replace]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "taken")
			var third *File
			setAfterCreateOpen(t, func(target string) {
				if third != nil {
					return
				}
				require.NoError(t, RemoveIfStale(target, farClock()))
				var err error
				third, err = create(dir, "taken", kindUserMin, []int{8}, withDirectCreate())
				require.NoError(t, err)
			})
			opts := []Option{withDirectCreate()}
			if replace {
				opts = append(opts, WithReplaceStale())
			}
			f, err := create(dir, "taken", kindUserMin, []int{8}, opts...)
			require.True(t, f == nil, "no File")
			require.NotNil(t, third)
			defer third.Close()
			if replace {
				require.ErrorIs(t, err, ErrOwnerAlive)
			} else {
				require.ErrorIs(t, err, errExists)
			}
			requireNames(t, path, third)
			require.ErrorIs(t, RemoveIfStale(path, farClock()), ErrOwnerAlive, "the third file is still locked")
		})
	}
}

// A process that holds the new file's lock for longer than
// creationLockWait (a cleaner stopped in a debugger, say) makes Create fail
// with ErrExists, leaving the empty file to it: without the lock, Create
// cannot unlink the name and know it removed its own file. The file is an
// abandoned creation for the next cleaner once the lock is gone.
func TestCreateLockHeldByAnotherProcess(t *testing.T) {
	old := creationLockWait
	creationLockWait = 50 * time.Millisecond
	t.Cleanup(func() { creationLockWait = old })
	for mode, opts := range createModes() {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			holder := -1
			var held string
			setAfterCreateOpen(t, func(target string) {
				fd, err := unix.Open(target, unix.O_RDONLY|unix.O_CLOEXEC, 0)
				require.NoError(t, err)
				require.NoError(t, unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB))
				holder, held = fd, target
			})
			start := time.Now()
			f, err := create(dir, "held", kindUserMin, []int{8}, opts...)
			waited := time.Since(start)
			require.True(t, f == nil, "no File")
			require.ErrorIs(t, err, errExists)
			require.ErrorIs(t, err, unix.EWOULDBLOCK)
			require.GreaterOrEqual(t, waited, creationLockWait)
			require.Less(t, waited, 10*creationLockWait)
			require.NotEqual(t, -1, holder)
			fi, err := os.Lstat(held)
			require.NoError(t, err, "left to the lock holder")
			require.Zero(t, fi.Size())
			require.NoError(t, unix.Close(holder))

			removed, err := Cleanup(dir, farClock())
			require.NoError(t, err)
			require.Equal(t, []string{filepath.Base(held)}, removed)
		})
	}
}

// RemoveIfStale never calls an unlocked empty file younger than
// minCreationAge abandoned, however short its liveness timeout; older, it
// does.
func TestRemoveIfStaleMinCreationAge(t *testing.T) {
	dir := t.TempDir()
	path := writeImage(t, dir, "young", nil)
	short := WithLivenessTimeout(time.Millisecond)
	require.ErrorIs(t, RemoveIfStale(path, short), ErrOwnerAlive)
	past := time.Now().Add(-2 * minCreationAge)
	require.NoError(t, os.Chtimes(path, past, past))
	require.NoError(t, RemoveIfStale(path, short))
	_, err := os.Lstat(path)
	require.ErrorIs(t, err, os.ErrNotExist)
}

// Creates of a free name race a cleaner whose clock is an hour ahead
// (RemoveIfStale on the name in direct mode, Cleanup of the directory,
// which sees the temporary files, in the default mode): each Create either
// returns a File the path names, or fails with ErrExists (the cleaner
// removed its new file createAttempts times); nothing else. Bounded by
// raceRounds per mode.
func TestCreateRacesSkewedCleaner(t *testing.T) {
	for mode, opts := range createModes() {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "skewed")
			runCleaner(t, func() {
				if mode == "direct" {
					_ = RemoveIfStale(path, farClock())
				} else {
					_, _ = Cleanup(dir, farClock())
				}
			})
			won, lost := 0, 0
			for rounds := raceRounds(500); rounds.more(); {
				f, err := create(dir, "skewed", kindUserMin, []int{8}, opts...)
				if err != nil {
					require.ErrorIs(t, err, errExists)
					lost++
					continue
				}
				won++
				requireNames(t, path, f)
				require.NoError(t, f.Remove())
				require.NoError(t, f.Close())
			}
			t.Logf("%d created, %d ErrExists", won, lost)
			require.NotZero(t, won)
		})
	}
}

// runCleaner calls clean in a loop on another goroutine until the test
// ends (t.Cleanup stops it and waits for it).
func runCleaner(t *testing.T, clean func()) {
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			clean()
		}
	}()
	t.Cleanup(func() { stop.Store(true); wg.Wait() })
}

// rounds bounds a race test's loop: a number of rounds (the races these
// tests provoke happen within a few hundred on this project's machines),
// multiplied by $DUTY_SOAK for a long soak run, and a wall-clock guard so
// that a slow machine (or -race) does not turn the loop into minutes.
type rounds struct {
	left     int
	deadline time.Time
}

func raceRounds(n int) *rounds {
	if k, err := strconv.Atoi(os.Getenv("DUTY_SOAK")); err == nil && k > 1 {
		return &rounds{left: n * k, deadline: time.Now().Add(time.Duration(k) * time.Minute)}
	}
	return &rounds{left: n, deadline: time.Now().Add(5 * time.Second)}
}

func (r *rounds) more() bool {
	r.left--
	return r.left >= 0 && time.Now().Before(r.deadline)
}
