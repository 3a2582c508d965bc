// Package mdfeed publishes the trading demo's market data on a ZMTP PUB
// socket: the quotes of package feed's generator, then an end message
// with its counts. Every message is a type-id frame (zmtp.Mapping's
// TypeIDFrame, the subscription prefix) and a body: a msg.Quote (TypeQuote)
// or an End (TypeEnd). Run waits for a subscriber, publishes at
// Config.Rate for Config.Duration (or until its context ends), then sends
// the end message. With the demo's Instruments and Seed, the quotes are its
// own feed's, timestamps aside (FeedNanos is the host's CLOCK_MONOTONIC).
package mdfeed

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/examples/trading/internal/feed"
	"github.com/dutyrt/duty/examples/trading/internal/msg"
	"github.com/dutyrt/duty/message"
	"github.com/dutyrt/duty/zmtp"
)

// Type ids of the first frame.
const (
	TypeQuote = msg.TypeQuote
	TypeEnd   = int32(1000)
)

// TypeFrame returns the first frame of a message of type id t.
func TypeFrame(t int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(t)) }

// End is the end message's body.
type End struct {
	Published int64 // quotes published
	Dropped   int64 // quotes the PUB socket did not queue for a subscriber
}

// Ends is the end message's codec.
var Ends = message.MustFixed[End](TypeEnd)

// Config configures Run.
type Config struct {
	Endpoint    string        // where to bind: tcp://host:port (port 0: any), ipc:///path
	Instruments int           // as the demo's -instruments
	Seed        uint64        // as the demo's -seed
	Rate        int64         // quotes per second, > 0
	Duration    time.Duration // how long to publish
	// Bound, if set, is called with the endpoint bound (the port chosen).
	Bound func(endpoint string)
	// Wait bounds the wait for a subscriber (DefaultWait if zero).
	Wait   time.Duration
	Logger *slog.Logger
	// Curve, if set, makes the PUB socket a CURVE server (zmtp.Curve):
	// encrypted, and only the subscribers it admits are served.
	Curve *zmtp.Curve
}

// DefaultWait is Config.Wait's default.
const DefaultWait = 30 * time.Second

// hwm is the PUB socket's per-subscriber high-water mark: seconds of
// quotes, so that a subscriber's stall does not drop market data.
const hwm = 1 << 20

// Run binds a PUB socket at cfg.Endpoint and publishes. It returns the end
// message it sent.
func Run(ctx context.Context, cfg Config) (End, error) {
	if cfg.Rate <= 0 || cfg.Duration <= 0 {
		return End{}, fmt.Errorf("mdfeed: rate %d and duration %v must be > 0", cfg.Rate, cfg.Duration)
	}
	if cfg.Wait <= 0 {
		cfg.Wait = DefaultWait
	}
	gen, err := feed.New(feed.Config{Instruments: cfg.Instruments, Seed: cfg.Seed, Now: monoNanos})
	if err != nil {
		return End{}, err
	}
	pub, err := zmtp.NewSocket(zmtp.Pub, zmtp.Options{HWM: hwm, Logger: cfg.Logger, Curve: cfg.Curve})
	if err != nil {
		return End{}, err
	}
	defer pub.Close()
	ep, err := pub.Bind(cfg.Endpoint)
	if err != nil {
		return End{}, err
	}
	if cfg.Bound != nil {
		cfg.Bound(ep)
	}
	quote, end := TypeFrame(TypeQuote), TypeFrame(TypeEnd)
	if err := waitFor(ctx, cfg.Wait, func() bool { return pub.Subscribers(quote) > 0 && pub.Subscribers(end) > 0 }); err != nil {
		return End{}, fmt.Errorf("mdfeed: no subscriber: %w", err)
	}

	var q msg.Quote
	body := make([]byte, msg.Quotes.Size(&q))
	var e End
	start := time.Now()
	stop := start.Add(cfg.Duration)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for now := start; now.Before(stop) && ctx.Err() == nil; {
		due := int64(now.Sub(start).Seconds()*float64(cfg.Rate)) - e.Published
		for range due {
			gen.Next(&q)
			msg.Quotes.Encode(body, &q)
			if err := pub.Send(quote, body); err != nil {
				return e, err
			}
			e.Published++
		}
		select {
		case now = <-tick.C:
		case <-ctx.Done():
		}
	}
	e.Dropped = int64(pub.Stats().Dropped)
	b := make([]byte, Ends.Size(&e))
	Ends.Encode(b, &e)
	if err := pub.Send(end, b); err != nil {
		return e, err
	}
	// The end message is the last: once every message is written (or
	// dropped), the subscriber has or will have it.
	want := uint64(e.Published + 1)
	err = waitFor(context.Background(), 10*time.Second, func() bool {
		st := pub.Stats()
		return st.Sent+st.Dropped+st.Lost >= want || st.Peers == 0
	})
	return e, err
}

func waitFor(ctx context.Context, limit time.Duration, cond func() bool) error {
	deadline := time.Now().Add(limit)
	for !cond() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %v", limit)
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// ReadSecretKey reads a CURVE secret key (Z85) from the file at path and
// returns the key pair.
func ReadSecretKey(path string) (public, secret zmtp.CurveKey, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return public, secret, fmt.Errorf("mdfeed: CURVE secret key: %w", err)
	}
	if secret, err = zmtp.ParseCurveKey(strings.TrimSpace(string(b))); err != nil {
		return public, secret, fmt.Errorf("mdfeed: CURVE secret key in %s: %w", path, err)
	}
	public, err = zmtp.CurvePublicKey(secret)
	return public, secret, err
}

// WriteKeyPair makes a CURVE key pair, writes its secret key to a new
// file at path (mode 0600) and returns the public key.
func WriteKeyPair(path string) (zmtp.CurveKey, error) {
	pub, sec, err := zmtp.NewCurveKeyPair()
	if err != nil {
		return pub, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return pub, fmt.Errorf("mdfeed: %w", err)
	}
	if _, err := fmt.Fprintln(f, sec.Z85()); err != nil {
		_ = f.Close()
		return pub, fmt.Errorf("mdfeed: %w", err)
	}
	return pub, f.Close()
}

// ParseKeys parses a comma-separated list of CURVE public keys (Z85).
func ParseKeys(list string) ([]zmtp.CurveKey, error) {
	var keys []zmtp.CurveKey
	for z := range strings.SplitSeq(list, ",") {
		k, err := zmtp.ParseCurveKey(strings.TrimSpace(z))
		if err != nil {
			return nil, fmt.Errorf("mdfeed: CURVE key %q: %w", z, err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// monoNanos is the demo's clock: the host's monotonic clock.
func monoNanos() int64 { return clock.Host.Nanos() }
