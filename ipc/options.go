package ipc

import (
	"io/fs"
	"time"

	"github.com/dutyrt/duty/clock"
)

// Defaults.
const (
	// defaultMode is the permission of a new file: owner read and write only.
	defaultMode fs.FileMode = 0o600
	// defaultLivenessTimeout is the owner liveness timeout Create stores in
	// the header when no WithLivenessTimeout is given (Aeron's 10 s).
	defaultLivenessTimeout = 10 * time.Second
	// defaultPollInterval is how often Open re-checks a file that is still
	// being created.
	defaultPollInterval = time.Millisecond
)

// Option configures the Create* functions (creators), the Open* functions
// and OpenReadOnly (openers), RemoveIfStale and Cleanup; ipc/publication
// passes them on (publication.WithFileOptions). Each option says which
// calls read it; the others ignore it.
type Option func(*config)

type config struct {
	mode             fs.FileMode
	direct           bool
	livenessTimeout  time.Duration
	replaceStale     bool
	populate         bool
	pollInterval     time.Duration
	waitForFile      bool
	requireLiveOwner bool
	clock            clock.Clock
	// CreateMailbox and OpenMailbox.
	consumerTimeout time.Duration
	counters        *CountersFile
}

func newConfig(opts []Option) config {
	c := config{
		mode:         defaultMode,
		pollInterval: defaultPollInterval,
		clock:        clock.System,
	}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithMode sets the permission bits of a new file (creators). The umask does
// not apply: the file gets exactly mode&0o777. Default 0600.
func WithMode(mode fs.FileMode) Option { return func(c *config) { c.mode = mode } }

// withDirectCreate makes Create build the file under its final name: it is
// visible (empty, then with a header whose version is 0) while it is being
// created, and Open waits for it. By default Create builds the file under a
// temporary name in the same directory and links it to its final name only
// once it is complete, so no reader ever sees a partial file.
func withDirectCreate() Option { return func(c *config) { c.direct = true } }

// WithLivenessTimeout sets the owner liveness timeout. A creator stores it
// in the header: the owner promises to call Heartbeat more often than that.
// RemoveIfStale and Cleanup use it instead of the value in the header.
// Default 10 s (Aeron's).
func WithLivenessTimeout(d time.Duration) Option {
	return func(c *config) { c.livenessTimeout = d }
}

// WithReplaceStale makes a creator, when the name exists, remove the existing
// file if (and only if) its owner is provably dead (see RemoveIfStale) and
// create the new one; a file whose owner may be alive gives ErrOwnerAlive.
// Without it, an existing name gives an error matching fs.ErrExist.
func WithReplaceStale() Option { return func(c *config) { c.replaceStale = true } }

// WithPopulate maps with MAP_POPULATE (creators, openers): the pages are faulted
// in at mapping time instead of on first touch. Linux only: elsewhere (no
// such flag) it has no effect.
func WithPopulate() Option { return func(c *config) { c.populate = true } }

// withPollInterval sets how often Open re-checks a file that is not ready
// yet (and a missing one, with WithWaitForFile). Default 1 ms.
func withPollInterval(d time.Duration) Option { return func(c *config) { c.pollInterval = d } }

// WithWaitForFile makes an opener wait, until its context ends, for a file that
// does not exist yet. Without it a missing file is an error at once
// (matching fs.ErrNotExist).
func WithWaitForFile() Option { return func(c *config) { c.waitForFile = true } }

// withLiveOwner makes Open fail with ErrOwnerDead when the file's owner is
// not alive (see File.ownerAlive).
func withLiveOwner() Option { return func(c *config) { c.requireLiveOwner = true } }

// WithClock sets the clock (clock.System by default) read for the
// creation time and first heartbeat (creators), for staleness decisions
// (openers, RemoveIfStale, Cleanup), for a mailbox's heartbeats (CreateMailbox,
// OpenMailbox: the mailbox's Config.Clock unless that is set) and an error
// log's timestamps (CreateErrorLog). Only its wall clock (EpochMillis) is
// compared with other processes'.
func WithClock(c clock.Clock) Option {
	return func(cfg *config) {
		if c != nil {
			cfg.clock = c
		}
	}
}

// now is the clock's wall time.
func (c *config) now() time.Time { return time.UnixMilli(c.clock.EpochMillis()) }

// WithConsumerTimeout sets how old a mailbox's consumer heartbeat may grow
// before its back-pressured senders report mailbox.ErrConsumerDead
// (CreateMailbox, which stores it in the file; Aeron's driver timeout).
// Default 10 s. The consumer refreshes the heartbeat
// every mailbox.Config.HeartbeatCycles drains: it must drain more often
// than this timeout divided by those cycles, or call
// mailbox.Mailbox.Heartbeat.
func WithConsumerTimeout(d time.Duration) Option {
	return func(c *config) { c.consumerTimeout = d }
}

// WithCounters makes a mailbox publish its statistics in a counters file
// this process owns (CreateMailbox, OpenMailbox's owner only): it allocates
// counters there (mailbox-depth, back-pressure, unblocked-claims for torn
// messages, torn-messages for corrupt records, and a heartbeat), updates
// them on every consumer heartbeat, and frees them at Close. The counters
// file must outlive the mailbox.
func WithCounters(f *CountersFile) Option { return func(c *config) { c.counters = f } }
