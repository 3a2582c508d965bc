package publication

import (
	"time"

	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/ipc"
)

// Publication defaults.
const (
	// defaultSubscriberTimeout is how long a subscriber's heartbeat may be
	// stale before the publisher drops it from flow control (Aeron's client
	// liveness timeout).
	defaultSubscriberTimeout = 10 * time.Second
	// defaultUnblockTimeout is how long a subscriber waits at a claim that
	// is not committed before it may unblock it (Aeron's publication
	// unblock timeout); see Subscription.Poll for the other conditions.
	defaultUnblockTimeout = 15 * time.Second
)

// Option configures Create, Open and
// OpenSubscription. Each option says which calls read it.
type Option func(*config)

type config struct {
	window            int
	mtu               int
	maxMessage        int
	maxSubscribers    int
	subscriberTimeout time.Duration
	unblockTimeout    time.Duration
	now               func() int64
	fileOpts          []ipc.Option
}

func newConfig(opts []Option) config {
	c := config{
		maxSubscribers:    defaultMaxSubscribers,
		subscriberTimeout: defaultSubscriberTimeout,
		unblockTimeout:    defaultUnblockTimeout,
		now:               epochMillis,
	}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// epochMillis is clock.System's wall clock.
func epochMillis() int64 { return clock.System.EpochMillis() }

// withWindow sets how many bytes a publisher may run ahead of the slowest
// active subscriber (Create): a multiple of 8, at most
// capacity/2, and at least twice the longest claim. Default capacity/2.
func withWindow(bytes int) Option { return func(c *config) { c.window = bytes } }

// withMTU sets the longest record a single fragment may take, header
// included (Create): a multiple of 8, at least 16, at most
// capacity/8. Messages whose record would be longer are fragmented.
// Default min(defaultMTU, capacity/8).
func withMTU(bytes int) Option { return func(c *config) { c.mtu = bytes } }

// withMaxMessageLength sets the longest message payload Offer accepts
// (Create). Default capacity/8.
func withMaxMessageLength(bytes int) Option {
	return func(c *config) { c.maxMessage = bytes }
}

// withMaxSubscribers sets the number of subscriber slots
// (Create). Default defaultMaxSubscribers.
func withMaxSubscribers(n int) Option { return func(c *config) { c.maxSubscribers = n } }

// WithSubscriberTimeout sets how long a subscriber's heartbeat may be stale
// before the owner drops it (Create; stored in the file).
// Subscribers heartbeat in every Poll whose millisecond clock reading
// changed. Default 10 s.
func WithSubscriberTimeout(d time.Duration) Option {
	return func(c *config) { c.subscriberTimeout = d }
}

// withUnblockTimeout sets how long subscribers wait at an uncommitted claim
// before unblocking it (Create; stored in the file). Default
// defaultUnblockTimeout.
func withUnblockTimeout(d time.Duration) Option {
	return func(c *config) { c.unblockTimeout = d }
}

// WithClock sets the clock (clock.System by default) whose wall clock
// (EpochMillis: compared across processes) times heartbeats and timeouts
// (all three calls). It is the file layer's clock too (ipc.WithClock),
// unless WithFileOptions sets another. A nil clock is refused.
func WithClock(c clock.Clock) Option {
	return func(cfg *config) {
		if c == nil {
			cfg.now = nil
			return
		}
		cfg.now = c.EpochMillis
		cfg.fileOpts = append([]ipc.Option{ipc.WithClock(c)}, cfg.fileOpts...)
	}
}

// WithFileOptions passes file-layer options to the file layer's create and open (all three
// calls): ipc.WithLivenessTimeout (the owner's heartbeat timeout, which
// subscribers use to decide that the publisher died), ipc.WithMode,
// ipc.WithPopulate, ipc.WithReplaceStale, ...
func WithFileOptions(opts ...ipc.Option) Option {
	return func(c *config) { c.fileOpts = append(c.fileOpts, opts...) }
}
