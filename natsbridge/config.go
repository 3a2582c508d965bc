package natsbridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/counters"
	"github.com/nats-io/nats.go"
)

// Defaults of Config.
const (
	DefaultBatchBytes    = 64 * 1024
	defaultFlushInterval = 50 * time.Microsecond
	defaultDrainLimit    = 256
)

// Defaults of JetStream.
const (
	defaultDuplicates = 2 * time.Minute
	defaultAckTimeout = 2 * time.Second
	defaultRetryWait  = 100 * time.Millisecond
	defaultAckWait    = 5 * time.Second
	defaultFetchWait  = time.Second
)

// Config configures one bridge: one local mailbox and one subject, in one
// direction. Several bridges map several mailboxes (docs/natsbridge.md,
// "Subjects and mapping").
type Config struct {
	// Name names the bridge in Stats, counter labels and logs; required.
	Name string
	// Subject is the NATS subject the outbound side publishes to and the
	// inbound side subscribes to (in core mode it may hold wildcards).
	Subject string
	// Conn is a connection to use; the bridge does not close it. With a nil
	// Conn the bridge connects to URL with Options and closes its
	// connection in OnClose. A Conn for an outbound bridge should have a
	// nats.WriteBufferSize of several batches (docs/natsbridge.md,
	// "Outbound: batching and back-pressure").
	Conn *nats.Conn
	// URL is nats.Connect's server list ("nats://a:4222,nats://b:4222").
	URL string
	// Options are passed to nats.Connect after the bridge's own (so they
	// win): credentials, TLS, reconnect policy, handlers. The bridge adds
	// MaxReconnects(-1) and a WriteBufferSize that keeps its batches off
	// the client's synchronous flush (docs/natsbridge.md, "Outbound:
	// batching and back-pressure").
	Options []nats.Option
	// JetStream selects JetStream mode; nil is core NATS mode.
	JetStream *JetStream
	// BatchBytes is the largest batch frame; it must hold the mailbox's
	// largest message, and stay under the server's max_payload. 0 is
	// DefaultBatchBytes, or for NewOutbound, if more, what the mailbox's
	// largest message needs.
	BatchBytes int
	// FlushInterval bounds how long a message waits in a batch that is not
	// full while the source keeps the outbound agent draining
	// (default 50 µs); a batch goes out as soon as a drain leaves
	// the source empty.
	FlushInterval time.Duration
	// DrainLimit bounds the messages an outbound duty cycle drains
	// (default 256).
	DrainLimit int
	// Counters, if set, receives the statistics as counters (Stats).
	Counters *counters.Manager
	// Logger receives connection events and rejected frames; nil is
	// slog.Default().
	Logger *slog.Logger
	// Clock times the flush interval, the retries and the extension of a
	// held batch's ack wait; nil is clock.System.
	Clock clock.Nano
}

// JetStream configures JetStream mode.
type JetStream struct {
	// Stream is the stream's name; required. Its subjects are
	// [Config.Subject].
	Stream string
	// Consumer is the inbound side's durable consumer name; "" is
	// Config.Name.
	Consumer string
	// Replicas of the stream (1 for one server, 3 for a three-node
	// cluster); 0 is 1.
	Replicas int
	// NoCreate uses an existing stream instead of creating or updating it.
	NoCreate bool
	// Duplicates is the stream's deduplication window (default 2 min):
	// a batch republished within it is stored once.
	Duplicates time.Duration
	// AckTimeout is how long the outbound side waits for the stream's
	// acknowledgement before it republishes a batch (default 2 s).
	AckTimeout time.Duration
	// RetryWait is the pause before republishing a batch that failed
	// (default 100 ms).
	RetryWait time.Duration
	// AckWait is the consumer's acknowledgement wait (default 5 s): a
	// batch not acknowledged within it is redelivered. The inbound side
	// extends it (InProgress) while a full mailbox holds a batch.
	AckWait time.Duration
	// FetchWait is how long one pull request waits for a batch
	// (default 1 s); at least a millisecond.
	FetchWait time.Duration
}

func (c *Config) withDefaults() (Config, error) {
	cfg := *c
	if cfg.Name == "" || cfg.Subject == "" {
		return cfg, fmt.Errorf("%w: Name and Subject are required", ErrConfig)
	}
	if cfg.Conn == nil && cfg.URL == "" {
		return cfg, fmt.Errorf("%w: %s: neither Conn nor URL", ErrConfig, cfg.Name)
	}
	if cfg.BatchBytes == 0 {
		cfg.BatchBytes = DefaultBatchBytes
	}
	if cfg.BatchBytes < minBatchBytes || cfg.BatchBytes > maxFrame {
		return cfg, fmt.Errorf("%w: %s: BatchBytes %d outside %d..%d", ErrConfig, cfg.Name, cfg.BatchBytes, minBatchBytes, maxFrame)
	}
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = defaultFlushInterval
	}
	if cfg.DrainLimit <= 0 {
		cfg.DrainLimit = defaultDrainLimit
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System
	}
	if j := cfg.JetStream; j != nil {
		js := *j
		if js.Stream == "" {
			return cfg, fmt.Errorf("%w: %s: JetStream.Stream is required", ErrConfig, cfg.Name)
		}
		if js.Consumer == "" {
			js.Consumer = cfg.Name
		}
		if js.Replicas <= 0 {
			js.Replicas = 1
		}
		def := func(d *time.Duration, v time.Duration) {
			if *d <= 0 {
				*d = v
			}
		}
		def(&js.Duplicates, defaultDuplicates)
		def(&js.AckTimeout, defaultAckTimeout)
		def(&js.RetryWait, defaultRetryWait)
		def(&js.AckWait, defaultAckWait)
		def(&js.FetchWait, defaultFetchWait)
		js.FetchWait = max(js.FetchWait, time.Millisecond)
		cfg.JetStream = &js
	}
	return cfg, nil
}

// connect returns cfg.Conn, or a new connection the caller owns. nats.Connect
// takes no context; the bridge gives it the context's deadline, if any, as
// its dial timeout, and gives up when ctx ends first.
func connect(ctx context.Context, cfg *Config) (nc *nats.Conn, owned bool, err error) {
	if cfg.Conn != nil {
		return cfg.Conn, false, nil
	}
	opts := []nats.Option{
		nats.Name("duty-natsbridge-" + cfg.Name),
		nats.MaxReconnects(-1),
		nats.WriteBufferSize(writeBufferFor(cfg.BatchBytes)),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				cfg.Logger.Warn("natsbridge: disconnected", "bridge", cfg.Name, "err", err)
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) {
			cfg.Logger.Info("natsbridge: reconnected", "bridge", cfg.Name, "url", c.ConnectedUrlRedacted())
		}),
	}
	if d, ok := ctx.Deadline(); ok {
		opts = append(opts, nats.Timeout(max(time.Until(d), time.Millisecond)))
	}
	opts = append(opts, cfg.Options...)
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	nc, err = nats.Connect(cfg.URL, opts...)
	if err != nil {
		return nil, false, fmt.Errorf("natsbridge: %s: connect: %w", cfg.Name, err)
	}
	return nc, true, nil
}

// writeBufferFor is the client write buffer the bridge asks for: room for
// several batches, so that a publish appends to the buffer and the client's
// flusher goroutine writes to the socket.
func writeBufferFor(batchBytes int) int { return max(8*batchBytes, 1<<20) }

// denied returns an error wrapping ErrDenied and the client's error when
// the last error the server sent on nc is a permissions violation for what
// ("publish" or "subscription") on subject; nil otherwise. The client keeps
// only its last error, so a caller looks right after a flush whose PONG
// follows the server's answer to the operation.
func denied(nc *nats.Conn, what, subject string) error {
	err := nc.LastError()
	if !errors.Is(err, nats.ErrPermissionViolation) {
		return nil
	}
	if !strings.Contains(strings.ToLower(err.Error()), what+" to \""+strings.ToLower(subject)+"\"") {
		return nil
	}
	return fmt.Errorf("%w: %s on %q: %w", ErrDenied, what, subject, err)
}
