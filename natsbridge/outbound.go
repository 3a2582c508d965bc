package natsbridge

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/ipc/publication"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/ringbuf"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Outbound is an agent that drains a local mailbox into batch frames and
// publishes them to Config.Subject. See the package documentation for its
// contract; it is not safe for concurrent use (one driver, as every agent).
type Outbound struct {
	cfg   Config
	mb    *mailbox.Mailbox
	nc    *nats.Conn
	owned bool
	js    jetstream.JetStream
	st    stats

	source uint64
	seq    uint64 // the last batch sequence sealed
	next   uint64 // the message sequence of the next message sealed, from 1

	fill      *batch // the batch the drain appends to
	fillSince int64  // clock reading at fill's first message
	full      bool   // fill refused a message: seal it
	out       *batch // the sealed batch, until it is accepted
	frame     []byte // out's frame; nil when nothing awaits acceptance
	msgID     string
	inflight  jetstream.PubAckFuture
	retryAt   int64
	published bool // the sealed frame was published at least once
	failed    bool // the sealed frame's publish failed once (logged)

	maxBuffered int
	poll        func(limit int) (int, error) // drains the source into fill
	handler     mailbox.Handler
	subHandler  ringbuf.ControlledHandler
	one         [1][]byte // a publication message's payload as parts
	ended       error     // the subscription's end of stream, once seen
	cycles      int
	batched     int64 // messages appended by this poll, counted once it returns

	// Core mode: the confirmer goroutine (confirm) flushes the connection
	// now and then to learn which handed messages the server has.
	handed    atomic.Int64          // messages handed to the client (duty goroutine writes)
	confirmed atomic.Int64          // of those, confirmed by a flush (confirmer writes)
	denied    atomic.Pointer[error] // a publish permission violation (confirmer writes)
	kick      chan struct{}         // handed grew: wake the confirmer
	stop      context.CancelFunc    // ends the confirmer
	wg        sync.WaitGroup        // the confirmer
}

// confirmInterval spaces the confirmer's flushes: a close after the
// connection failed counts as lost what was handed to the client within
// about this long (and the round trip) before, whether or not it arrived.
const confirmInterval = 5 * time.Millisecond

var _ agent.Agent = (*Outbound)(nil)

// NewOutbound returns an outbound bridge for mb, connecting (or using
// cfg.Conn) and, in JetStream mode, creating or updating the stream; ctx
// bounds those calls. The bridge is the only consumer of mb: it drains it
// in DoWork.
func NewOutbound(ctx context.Context, cfg Config, mb *mailbox.Mailbox) (*Outbound, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if mb == nil {
		return nil, fmt.Errorf("%w: %s: nil mailbox", ErrConfig, c.Name)
	}
	need := headerLength + entryHeaderLength + partPrefixLength + mb.MaxMessageSize()
	if cfg.BatchBytes == 0 && need <= maxFrame {
		c.BatchBytes = max(c.BatchBytes, need) // the default holds the largest message
	}
	if c.BatchBytes < need {
		return nil, fmt.Errorf("%w: %s: BatchBytes %d cannot hold the mailbox's largest message (needs %d)", ErrConfig, c.Name, c.BatchBytes, need)
	}
	if mb.MaxParts() > maxParts {
		return nil, fmt.Errorf("%w: %s: mailbox allows %d parts, a frame %d", ErrConfig, c.Name, mb.MaxParts(), maxParts)
	}
	o := &Outbound{cfg: c, mb: mb}
	o.handler = o.append
	o.poll = func(limit int) (int, error) { return mb.Drain(o.handler, limit) }
	return o, o.open(ctx)
}

// NewOutboundFromSubscription returns an outbound bridge that polls an IPC
// publication's subscription (package ipc/publication) instead of a
// mailbox, as NewOutbound does otherwise. Each message is one entry of one
// part. BatchBytes must hold the publication's largest message plus
// 52 bytes (the frame header and one part's entry overhead): a longer message
// is dropped and counted (the subscription does not say its bound). At the
// end of the stream the bridge publishes what it batched and ends
// (agent.ErrDone; agent.Terminate for a publisher that died or a
// subscription dropped or closed). The caller closes sub.
func NewOutboundFromSubscription(ctx context.Context, cfg Config, sub *publication.Subscription) (*Outbound, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if sub == nil {
		return nil, fmt.Errorf("%w: %s: nil subscription", ErrConfig, c.Name)
	}
	o := &Outbound{cfg: c}
	o.subHandler = o.appendPayload
	o.poll = func(limit int) (int, error) { return sub.ControlledPoll(o.subHandler, limit) }
	return o, o.open(ctx)
}

// open makes the batches and counters and connects.
func (o *Outbound) open(ctx context.Context) error {
	c := &o.cfg
	o.source = newSource()
	o.next = 1
	o.fill, _ = newBatch(c.BatchBytes)
	o.out, _ = newBatch(c.BatchBytes)
	if err := o.st.init(c.Name, "out", c.Counters); err != nil {
		return err
	}
	var err error
	if o.nc, o.owned, err = connect(ctx, c); err != nil {
		o.st.close()
		return err
	}
	o.maxBuffered = o.nc.Opts.WriteBufferSize - c.BatchBytes
	if mp := o.nc.MaxPayload(); mp > 0 {
		if c.JetStream != nil {
			mp -= 1024 // the message id header travels in the same payload limit
		}
		if int64(c.BatchBytes) > mp {
			o.release()
			return fmt.Errorf("%w: %s: BatchBytes %d above what the server's max_payload leaves (%d)", ErrConfig, c.Name, c.BatchBytes, mp)
		}
	}
	if o.maxBuffered < c.BatchBytes {
		// A client write buffer smaller than two batches: every publish
		// may flush on the duty thread; allow one batch at a time.
		o.maxBuffered = c.BatchBytes
	}
	if c.JetStream != nil {
		if o.js, err = openStream(ctx, o.nc, c); err != nil {
			o.release()
			return err
		}
		return nil
	}
	var cctx context.Context
	cctx, o.stop = context.WithCancel(context.Background())
	o.kick = make(chan struct{}, 1)
	o.wg.Add(1)
	go o.confirm(cctx)
	return nil
}

// confirm runs on a goroutine of its own in core mode, until OnClose: when
// messages were handed to the client since the last confirmation, it
// flushes the connection (a PING, which the server answers after it has
// processed everything the client wrote before it), at most once per
// confirmInterval; after a successful flush the messages handed before it
// are confirmed. A flush fails while the connection is down; the next one
// after a reconnect confirms what the reconnect buffer carried, and what
// the broken connection lost shows as a gap at the receivers. A publish
// permission violation for the subject is recorded for DoWork instead.
//
// Memory ordering: the duty goroutine adds to handed after Publish
// returned, so every message counted in the value loaded here was queued
// in the client before the PING; confirmed is stored here only and read by
// OnClose after wg.Wait.
func (o *Outbound) confirm(ctx context.Context) {
	defer o.wg.Done()
	for {
		h := o.handed.Load()
		if h == o.confirmed.Load() {
			select {
			case <-ctx.Done():
				return
			case <-o.kick:
				continue
			}
		}
		if o.nc.IsClosed() {
			return // nothing more will be confirmed; OnClose counts the rest
		}
		fctx, cancel := context.WithTimeout(ctx, time.Second)
		err := o.nc.FlushWithContext(fctx)
		cancel()
		if err == nil {
			if d := denied(o.nc, "publish", o.cfg.Subject); d != nil {
				o.denied.Store(&d)
				return
			}
			o.confirmed.Store(h)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(confirmInterval):
		}
	}
}

// newSource returns a random non-zero source id: a restarted bridge is a
// new source, so its batch sequence restarting at 1 is neither a gap nor a
// duplicate to anyone.
func newSource() uint64 {
	for {
		if s := rand.Uint64(); s != 0 {
			return s
		}
	}
}

func openStream(ctx context.Context, nc *nats.Conn, c *Config) (jetstream.JetStream, error) {
	j := c.JetStream
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(j.AckTimeout))
	if err != nil {
		return nil, fmt.Errorf("natsbridge: %s: jetstream: %w", c.Name, err)
	}
	if j.NoCreate {
		_, err = js.Stream(ctx, j.Stream)
	} else {
		_, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name:       j.Stream,
			Subjects:   []string{c.Subject},
			Storage:    jetstream.FileStorage,
			Replicas:   j.Replicas,
			Duplicates: j.Duplicates,
		})
	}
	if err != nil {
		return nil, fmt.Errorf("natsbridge: %s: stream %s: %w", c.Name, j.Stream, err)
	}
	return js, nil
}

// RoleName returns "natsbridge-out-<name>".
func (o *Outbound) RoleName() string { return "natsbridge-out-" + o.cfg.Name }

// OnStart does nothing: the connection was made by NewOutbound.
func (o *Outbound) OnStart() error { return nil }

// Stats returns the bridge's statistics. Safe from any goroutine.
func (o *Outbound) Stats() Stats {
	o.st.set(statReconnects, int64(o.nc.Stats().Reconnects))
	return o.st.snapshot()
}

// append is the drain handler: it packs a message into fill, or leaves it
// in the mailbox (Abort) when fill is full.
func (o *Outbound) append(m *mailbox.Message) mailbox.Action {
	return o.add(m.TypeID(), m.Parts())
}

// appendPayload is the subscription's poll handler, as append.
func (o *Outbound) appendPayload(typeID int32, payload []byte) ringbuf.Action {
	o.one[0] = payload
	a := o.add(typeID, o.one[:])
	o.one[0] = nil
	return a
}

func (o *Outbound) add(typeID int32, parts [][]byte) ringbuf.Action {
	err := o.fill.Append(typeID, parts...)
	switch {
	case err == nil:
		if o.fill.Count() == 1 {
			o.fillSince = o.cfg.Clock.Nanos()
		}
		o.batched++
		return mailbox.Continue
	case err == errBatchFull:
		o.full = true
		return mailbox.Abort
	default: // cannot be carried at all (NewOutbound's checks make it rare)
		o.st.add(statDropped, 1)
		o.cfg.Logger.Error("natsbridge: message dropped", "bridge", o.cfg.Name, "type", typeID, "err", err)
		return mailbox.Continue
	}
}

// DoWork runs one duty cycle: it offers the sealed batch (if any) to the
// client again, drains the mailbox into the filling batch unless that is
// full, and seals and publishes the filling batch when the drain left the
// source empty, when the batch is full, or when its first message has
// waited FlushInterval while more were queued. It never waits: a client buffer
// above its bound, a refused publish or, in JetStream mode, a batch whose
// acknowledgement has not come yet, leaves the batch sealed for the next
// cycle, and a full filling batch stops the draining, so the mailbox fills
// and its senders see mailbox.ErrBackPressured. A connection closed for
// good ends the agent (agent.Terminate), found by a publish or by a check
// every 4096 cycles. A subject the server does not permit the bridge to
// publish to ends the agent too (ErrDenied, seen by the confirming flush).
func (o *Outbound) DoWork() (int, error) {
	if p := o.denied.Load(); p != nil {
		return 0, agent.Terminate(fmt.Errorf("natsbridge: %s: %w", o.cfg.Name, *p))
	}
	o.cycles++
	if o.cycles&4095 == 0 {
		o.st.set(statReconnects, int64(o.nc.Stats().Reconnects))
		if o.nc.IsClosed() {
			return 0, o.connErr(nats.ErrConnectionClosed)
		}
	}
	work := 0
	var errs error
	if o.frame != nil {
		n, err := o.push()
		work += n
		errs = err
	}
	drained := false // the source had nothing more to give this cycle
	if !o.full && o.ended == nil {
		n, err := o.poll(o.cfg.DrainLimit)
		work += n
		if o.batched > 0 { // one atomic add per poll, not per message
			o.st.add(statBatched, o.batched)
			o.batched = 0
		}
		drained = n < o.cfg.DrainLimit && !o.full
		if err != nil {
			if o.mb == nil && (errors.Is(err, publication.ErrEndOfStream) ||
				errors.Is(err, publication.ErrSubscriberDropped) || errors.Is(err, publication.ErrClosed)) {
				o.ended = err
			} else {
				errs = errors.Join(errs, err)
			}
		}
	}
	// Nagle off: a batch goes out as soon as the source is drained empty;
	// the size and time bounds apply only while more is queued. A batch
	// that waits for the previous one (a full client buffer, an
	// acknowledgement) goes on filling meanwhile.
	if o.frame == nil && o.fill.Count() > 0 &&
		(o.full || drained || o.ended != nil || o.cfg.Clock.Nanos()-o.fillSince >= int64(o.cfg.FlushInterval)) {
		o.seal()
		n, err := o.push()
		work += n
		if err != nil {
			errs = errors.Join(errs, err)
		}
	}
	if o.ended != nil && o.frame == nil && o.fill.Count() == 0 && errs == nil {
		if o.ended == publication.ErrEndOfStream {
			return work, agent.ErrDone
		}
		return work, agent.Terminate(fmt.Errorf("natsbridge: %s: %w", o.cfg.Name, o.ended))
	}
	return work, errs
}

// seal turns fill into the sealed batch out and starts a new fill.
func (o *Outbound) seal() {
	o.fill, o.out = o.out, o.fill
	o.fill.Reset()
	o.full = false
	o.seq++
	o.frame = o.out.Seal(o.source, o.seq, o.next)
	o.next += uint64(o.out.Count())
	o.published, o.failed = false, false
	if o.js != nil {
		o.msgID = fmt.Sprintf("%016x-%d", o.source, o.seq)
	}
}

// push offers the sealed frame; it returns 1 once the frame is accepted.
func (o *Outbound) push() (int, error) {
	if o.js != nil {
		return o.pushJetStream()
	}
	buffered, err := o.nc.Buffered()
	if err != nil {
		return 0, o.connErr(err)
	}
	if buffered+len(o.frame) > o.maxBuffered {
		o.st.add(statBackPressured, 1)
		return 0, nil
	}
	switch err := o.nc.Publish(o.cfg.Subject, o.frame); {
	case err == nil:
		o.accepted()
		return 1, nil
	case errors.Is(err, nats.ErrReconnectBufExceeded):
		o.st.add(statBackPressured, 1)
		return 0, nil
	default:
		return 0, o.connErr(err)
	}
}

// connErr turns a closed connection into the agent's termination: nothing
// can be published again.
func (o *Outbound) connErr(err error) error {
	if o.nc.IsClosed() {
		return agent.Terminate(fmt.Errorf("natsbridge: %s: connection closed: %w", o.cfg.Name, err))
	}
	return fmt.Errorf("natsbridge: %s: publish: %w", o.cfg.Name, err)
}

func (o *Outbound) accepted() {
	o.frame = nil
	o.inflight = nil
	o.st.add(statPublished, 1)
	if o.js == nil {
		o.handed.Add(int64(o.out.Count()))
		select { // wake the confirmer; it is awake already if the slot is taken
		case o.kick <- struct{}{}:
		default:
		}
	}
}

// pushJetStream publishes the sealed frame with its message id, at most one
// batch in flight, and polls its acknowledgement. A failed or timed-out
// publish is republished, same bytes and id, after RetryWait: the stream
// stores it once (deduplication), and batches stay in order because the
// next one is published only after this one's acknowledgement.
func (o *Outbound) pushJetStream() (int, error) {
	if o.inflight == nil {
		if o.retryAt != 0 && o.cfg.Clock.Nanos() < o.retryAt {
			return 0, nil
		}
		o.retryAt = 0
		if o.nc.IsClosed() {
			return 0, o.connErr(nats.ErrConnectionClosed)
		}
		msg := &nats.Msg{Subject: o.cfg.Subject, Data: o.frame, Header: nats.Header{jetstream.MsgIDHeader: []string{o.msgID}}}
		f, err := o.js.PublishMsgAsync(msg)
		if err != nil {
			o.st.add(statBackPressured, 1)
			o.retryAt = o.cfg.Clock.Nanos() + int64(o.cfg.JetStream.RetryWait)
			return 0, nil
		}
		if o.published {
			o.st.add(statRepublished, 1)
		}
		o.published = true
		o.inflight = f
	}
	select {
	case <-o.inflight.Ok():
		o.accepted()
		return 1, nil
	case err := <-o.inflight.Err():
		o.inflight = nil
		o.retryAt = o.cfg.Clock.Nanos() + int64(o.cfg.JetStream.RetryWait)
		if !o.failed { // once per batch: a long outage must not flood the log
			o.failed = true
			o.cfg.Logger.Warn("natsbridge: publish not acknowledged, republishing", "bridge", o.cfg.Name, "seq", o.seq, "err", err)
		}
		return 0, nil
	default:
		return 0, nil
	}
}

// OnClose publishes what is batched, best effort: in core mode it hands the
// sealed and the filling batch to the client and flushes it (at most a
// second); in JetStream mode it waits for their acknowledgements (at most
// twice AckTimeout in all). Messages it took from its source and could not
// publish, and in core mode those handed to the client that no flush
// confirmed the server has (the connection failed), are counted in
// Stats.LostMessages, and it returns an error wrapping ErrLost with their
// count and the cause. Messages still in the mailbox stay there. Then it
// frees the counters and closes a connection the bridge opened.
func (o *Outbound) OnClose() error {
	deadline := time.Now().Add(time.Second)
	if o.js != nil {
		deadline = time.Now().Add(2 * o.cfg.JetStream.AckTimeout)
	}
	var cause error
	for !o.nc.IsClosed() && time.Now().Before(deadline) {
		if o.frame == nil {
			if o.fill.Count() == 0 {
				break
			}
			o.seal()
		}
		if _, err := o.push(); err != nil {
			cause = err
			break
		}
		if o.frame != nil {
			time.Sleep(time.Millisecond)
		}
	}
	unpublished := int64(o.fill.Count())
	if o.frame != nil {
		unpublished += int64(o.out.Count())
	}
	unconfirmed := int64(0)
	if o.js == nil {
		o.stop()
		o.wg.Wait()
		handed := o.handed.Load()
		if handed > o.confirmed.Load() {
			err := nats.ErrConnectionClosed
			if !o.nc.IsClosed() {
				err = o.nc.FlushTimeout(max(time.Until(deadline), 0) + 10*time.Millisecond)
			}
			if err == nil {
				err = denied(o.nc, "publish", o.cfg.Subject)
			}
			if err == nil {
				o.confirmed.Store(handed)
			} else {
				cause = errors.Join(cause, err)
			}
		}
		unconfirmed = handed - o.confirmed.Load()
	}
	var err error
	if lost := unpublished + unconfirmed; lost > 0 {
		o.st.add(statLostMessages, lost)
		if cause == nil && o.nc.IsClosed() {
			cause = nats.ErrConnectionClosed
		}
		if cause == nil {
			cause = context.DeadlineExceeded
		}
		err = fmt.Errorf("natsbridge: %s: %w: %d messages not published, %d handed to the client and not confirmed by the server: %w",
			o.cfg.Name, ErrLost, unpublished, unconfirmed, cause)
		o.cfg.Logger.Error("natsbridge: closed with messages lost", "bridge", o.cfg.Name, "unpublished", unpublished, "unconfirmed", unconfirmed, "err", cause)
	}
	o.st.set(statReconnects, int64(o.nc.Stats().Reconnects))
	o.release()
	return err
}

func (o *Outbound) release() {
	if o.stop != nil {
		o.stop()
		o.wg.Wait()
	}
	if o.js != nil {
		o.js.CleanupPublisher()
	}
	o.st.close()
	if o.owned {
		o.nc.Close()
	}
}
