package natsbridge

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/mailbox"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Inbound delivers the batches published on Config.Subject into a local
// mailbox, as one more sender of that mailbox. It is an agent in both
// modes: in core NATS mode the client's subscription callback delivers and
// DoWork only samples statistics; in JetStream mode DoWork pulls, delivers
// and acknowledges. See the package documentation for the guarantees.
type Inbound struct {
	cfg   Config
	mb    *mailbox.Mailbox
	nc    *nats.Conn
	owned bool
	st    stats

	// Core mode. mu is held by the subscription callback while it
	// delivers, and by OnClose to wait for the callback to finish.
	sub     *nats.Subscription
	mu      sync.Mutex
	closed  bool
	coreR   Reader
	subLost int // sub.Dropped() already counted

	// sources remembers each source's last batch: in core mode for gaps
	// (under mu), in JetStream mode for gaps and batches stored twice (on
	// the agent's goroutine).
	sources sourceTable

	// JetStream mode, all on the agent's goroutine.
	cons      jetstream.Consumer
	ctx       context.Context
	cancel    context.CancelFunc
	fetch     jetstream.MessageBatch
	fetchStop context.CancelFunc
	retryAt   int64
	cur       jetstream.Msg // the batch being delivered, not acknowledged yet
	curSeq    uint64
	r         Reader
	have      bool                      // r holds a message not delivered yet
	hw        uint64                    // highest stream sequence delivered whole
	heldSince int64                     // clock reading when cur first found the mailbox full
	ack       func(jetstream.Msg) error // jetstream.Msg.Ack; tests lose acknowledgements here
	waiting   bool                      // pull found the mailbox without room (counted once)
	gone      error                     // the consumer was deleted
	goneAsync atomic.Pointer[error]     // set by checkConsumer's goroutine
	checking  atomic.Bool               // a checkConsumer goroutine runs
	wg        sync.WaitGroup            // checkConsumer's goroutine

	cycles int
}

var (
	_ agent.Agent        = (*Inbound)(nil)
	_ agent.ContextAware = (*Inbound)(nil)
)

// maxSources bounds a generation of the source table (sourceTable).
const maxSources = 4096

// source is what an inbound bridge remembers of a source.
type source struct {
	batch uint64 // the last batch sequence seen
	next  uint64 // the message sequence after the last batch's messages
}

// sourceTable maps source ids to their state, in two generations of at most
// maxSources each, so that frames of ever new source ids (restarted
// outbound bridges, or garbage) cannot grow it without bound: when the
// current generation is full it becomes the old one and the old one is
// forgotten. A source silent while maxSources others first appeared is
// then taken for a new one.
type sourceTable struct {
	cur, old map[uint64]source
}

func newSourceTable() sourceTable {
	return sourceTable{cur: make(map[uint64]source), old: make(map[uint64]source)}
}

func (t *sourceTable) get(id uint64) (source, bool) {
	if s, ok := t.cur[id]; ok {
		return s, true
	}
	s, ok := t.old[id]
	return s, ok
}

func (t *sourceTable) put(id uint64, s source) {
	if _, ok := t.cur[id]; !ok && len(t.cur) >= maxSources {
		t.cur, t.old = t.old, t.cur
		clear(t.cur)
	}
	t.cur[id] = s
}

// NewInbound returns an inbound bridge into mb, connecting (or using
// cfg.Conn). In core mode it subscribes at once: delivery starts before the
// agent runs. In JetStream mode it creates or updates the stream (unless
// NoCreate) and the durable consumer, and reads the consumer's ack floor as
// the first high-water sequence; ctx bounds those calls.
func NewInbound(ctx context.Context, cfg Config, mb *mailbox.Mailbox) (*Inbound, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if mb == nil {
		return nil, fmt.Errorf("%w: %s: nil mailbox", ErrConfig, c.Name)
	}
	in := &Inbound{cfg: c, mb: mb, sources: newSourceTable(), ack: jetstream.Msg.Ack}
	in.ctx, in.cancel = context.WithCancel(context.Background())
	if err := in.st.init(c.Name, "in", c.Counters); err != nil {
		return nil, err
	}
	if in.nc, in.owned, err = connect(ctx, &c); err != nil {
		in.st.close()
		return nil, err
	}
	if c.JetStream == nil {
		in.sub, err = in.nc.Subscribe(c.Subject, in.onMsg)
		if err == nil {
			err = in.nc.FlushWithContext(ctx) // the subscription is registered
		}
		if err == nil {
			// The server answers a subscription it does not permit before
			// the flush's PONG, so the client has recorded it by now.
			err = denied(in.nc, "subscription", c.Subject)
		}
	} else {
		err = in.openConsumer(ctx)
	}
	if err != nil {
		in.release()
		return nil, fmt.Errorf("natsbridge: %s: %w", c.Name, err)
	}
	return in, nil
}

func (in *Inbound) openConsumer(ctx context.Context) error {
	j := in.cfg.JetStream
	js, err := openStream(ctx, in.nc, &in.cfg)
	if err != nil {
		return err
	}
	in.cons, err = js.CreateOrUpdateConsumer(ctx, j.Stream, jetstream.ConsumerConfig{
		Durable:       j.Consumer,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       j.AckWait,
		MaxAckPending: 1,
		FilterSubject: in.cfg.Subject,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return fmt.Errorf("consumer %s: %w", j.Consumer, err)
	}
	in.hw = in.cons.CachedInfo().AckFloor.Stream
	return nil
}

// BindContext ties the bridge's pull requests to ctx (agent.ContextAware):
// they end when it does.
func (in *Inbound) BindContext(ctx context.Context) {
	in.cancel()
	in.ctx, in.cancel = context.WithCancel(ctx)
}

// RoleName returns "natsbridge-in-<name>".
func (in *Inbound) RoleName() string { return "natsbridge-in-" + in.cfg.Name }

// OnStart does nothing: NewInbound connected.
func (in *Inbound) OnStart() error { return nil }

// highWater returns the highest stream sequence delivered whole into the
// mailbox (JetStream mode); 0 in core mode. Call it on the agent's
// goroutine or after OnClose.
func (in *Inbound) highWater() uint64 { return in.hw }

// Stats returns the bridge's statistics. Safe from any goroutine.
func (in *Inbound) Stats() Stats {
	in.sample()
	return in.st.snapshot()
}

// sample copies the client's reconnect count and the subscription's
// slow-consumer drops into the statistics.
func (in *Inbound) sample() {
	in.st.set(statReconnects, int64(in.nc.Stats().Reconnects))
	if in.sub == nil {
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return
	}
	if d, err := in.sub.Dropped(); err == nil && d > in.subLost {
		// Their messages count in LostMessages when the source's next
		// batch shows the gap; counting them here too would count twice.
		in.st.add(statClientDropped, int64(d-in.subLost))
		in.subLost = d
	}
}

// onMsg is the core mode's subscription callback (one goroutine per
// subscription, the client's): it checks the frame, tracks the source's
// sequence, and sends the messages into the mailbox, stopping at the first
// the mailbox refuses: those left are counted as dropped.
func (in *Inbound) onMsg(m *nats.Msg) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return
	}
	h, err := in.coreR.Reset(m.Data)
	if err != nil {
		in.reject(err)
		return
	}
	in.track(h)
	delivered := int64(0) // counted once per frame: one atomic add, not one per message
	defer func() { in.st.add(statDelivered, delivered) }()
	for in.coreR.Next() {
		switch err := send(in.mb, &in.coreR); {
		case err == nil:
			delivered++
		case errors.Is(err, mailbox.ErrTooLong):
			in.st.add(statDropped, 1)
		default: // full, closed, consumer dead: the rest of the batch is lost
			in.st.add(statDropped, int64(1+in.coreR.Remaining()))
			return
		}
	}
}

// track counts the batches and messages missing between a source's last
// batch and h. In core mode a source's first batch seen counts those
// before it: a source numbers its batches and messages from 1, and what it
// sent before this bridge's first batch from it never reached this bridge
// (it was sent before the subscription, or to a predecessor of this
// bridge). In JetStream mode the consumer's ack floor accounts for those,
// so only gaps between batches count.
func (in *Inbound) track(h Header) {
	last, ok := in.sources.get(h.Source)
	switch {
	case !ok && in.cons == nil:
		in.lost(h.Sequence-1, h.First-1)
	case !ok:
	case h.Sequence <= last.batch:
		return // an older batch than the last: nothing to learn
	case h.First >= last.next:
		in.lost(h.Sequence-last.batch-1, h.First-last.next)
	default: // overlapping message sequences: a source id used twice
		in.lost(h.Sequence-last.batch-1, 0)
	}
	in.sources.put(h.Source, source{batch: h.Sequence, next: h.First + uint64(h.Count)})
}

// lost counts batches and messages missing from a source's sequences.
func (in *Inbound) lost(batches, messages uint64) {
	if batches > 0 {
		in.st.add(statLostBatches, int64(batches))
	}
	if messages > 0 {
		in.st.add(statLostMessages, int64(messages))
		in.cfg.Logger.Warn("natsbridge: messages missed", "bridge", in.cfg.Name, "subject", in.cfg.Subject, "batches", batches, "messages", messages)
	}
}

func (in *Inbound) reject(err error) {
	in.st.add(statRejected, 1)
	in.cfg.Logger.Warn("natsbridge: payload rejected", "bridge", in.cfg.Name, "subject", in.cfg.Subject, "err", err)
}

// send delivers r's current message: a plain message for one part, a
// multipart one otherwise.
func send(mb *mailbox.Mailbox, r *Reader) error {
	if p := r.Parts(); len(p) == 1 {
		return mb.Send(r.TypeID(), p[0])
	}
	return mb.SendParts(r.TypeID(), r.Parts()...)
}

// DoWork runs one duty cycle. In core mode it samples statistics now and
// then and returns 0. In either mode it ends the agent (agent.Terminate)
// once it finds the connection closed for good, checked every 4096 cycles. In JetStream mode it delivers what is left of the
// current batch; when that is done it acknowledges the batch and, if the
// mailbox has room for another batch, pulls one; it never waits.
func (in *Inbound) DoWork() (int, error) {
	in.cycles++
	if in.cycles&4095 == 0 {
		in.sample()
		if in.nc.IsClosed() {
			return 0, agent.Terminate(fmt.Errorf("natsbridge: %s: %w", in.cfg.Name, nats.ErrConnectionClosed))
		}
	}
	if in.cons == nil {
		return 0, nil
	}
	work := 0
	if in.cur != nil {
		n, done, err := in.deliver()
		work += n
		if err != nil || !done {
			return work, err
		}
	}
	if in.fetch == nil {
		if in.gone == nil {
			if p := in.goneAsync.Load(); p != nil {
				in.gone = *p
			}
		}
		if in.gone != nil {
			return work, agent.Terminate(fmt.Errorf("natsbridge: %s: %w", in.cfg.Name, in.gone))
		}
		if !in.pull() {
			return work, nil
		}
	}
	select {
	case m, ok := <-in.fetch.Messages():
		if !ok {
			err := in.fetch.Error()
			in.endFetch()
			switch {
			case err == nil || in.ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
			case errors.Is(err, jetstream.ErrConsumerDeleted):
				// Its stream sequences may start again from 1: a high-water
				// sequence would then skip every batch. Start a new bridge.
				return work, agent.Terminate(fmt.Errorf("natsbridge: %s: %w", in.cfg.Name, err))
			default: // reconnecting, leader changes: pull again soon
				in.cfg.Logger.Debug("natsbridge: pull ended", "bridge", in.cfg.Name, "err", err)
				in.retryAt = in.cfg.Clock.Nanos() + int64(in.cfg.JetStream.RetryWait)
				if errors.Is(err, nats.ErrNoResponders) {
					in.checkConsumer()
				}
			}
			return work, nil
		}
		in.endFetch() // a pull for one batch is complete with it
		work++
		if !in.accept(m) {
			return work, nil
		}
		n, done, err := in.deliver()
		if done {
			in.pull() // the next request follows the acknowledgement at once
		}
		return work + n, err
	default:
		return work, nil
	}
}

// pull starts a pull request for one batch if the mailbox has room for a
// batch of the largest size (or, for a mailbox smaller than that, is
// empty). With MaxAckPending 1 the server has at most this one batch out.
func (in *Inbound) pull() bool {
	if in.retryAt != 0 && in.cfg.Clock.Nanos() < in.retryAt {
		return false
	}
	in.retryAt = 0
	need := min(in.cfg.BatchBytes+in.cfg.BatchBytes/2, in.mb.Capacity())
	if in.mb.Capacity()-in.mb.Stats().Depth < need {
		if !in.waiting {
			in.waiting = true
			in.st.add(statBackPressured, 1)
		}
		return false
	}
	in.waiting = false
	ctx, stop := context.WithTimeout(in.ctx, in.cfg.JetStream.FetchWait)
	b, err := in.cons.Fetch(1, jetstream.FetchContext(ctx))
	if err != nil {
		stop()
		if errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrConsumerNotFound) {
			in.gone = err
		}
		in.retryAt = in.cfg.Clock.Nanos() + int64(in.cfg.JetStream.RetryWait)
		in.cfg.Logger.Debug("natsbridge: pull failed", "bridge", in.cfg.Name, "err", err)
		return false
	}
	in.fetch, in.fetchStop = b, stop
	return true
}

// checkConsumer asks the server, on a goroutine of its own so that the
// duty cycle does not wait, whether the consumer still exists: a pull
// request to a deleted consumer finds no responder, as one to a server
// that is not ready does. One check at a time; OnClose waits for it.
func (in *Inbound) checkConsumer() {
	if !in.checking.CompareAndSwap(false, true) {
		return
	}
	in.wg.Add(1)
	go func() {
		defer in.wg.Done()
		defer in.checking.Store(false)
		ctx, cancel := context.WithTimeout(in.ctx, in.cfg.JetStream.FetchWait)
		defer cancel()
		if _, err := in.cons.Info(ctx); errors.Is(err, jetstream.ErrConsumerNotFound) {
			// The atomic store happens before the DoWork load that sees it.
			in.goneAsync.Store(&err)
		}
	}()
}

func (in *Inbound) endFetch() {
	if in.fetchStop != nil {
		in.fetchStop()
	}
	in.fetch, in.fetchStop = nil, nil
}

// accept takes a pulled batch: a redelivery of a batch already delivered
// (stream sequence at or below the high-water sequence) is acknowledged and
// skipped; a frame that does not decode is terminated (never redelivered)
// and counted; a frame whose source sequence this bridge has delivered
// already (a second stream entry of one batch) is acknowledged, skipped and
// counted; otherwise the batch becomes the current one. It reports
// whether there is a current batch to deliver.
func (in *Inbound) accept(m jetstream.Msg) bool {
	meta, err := m.Metadata()
	if err != nil {
		in.reject(err)
		_ = m.Term()
		return false
	}
	seq := meta.Sequence.Stream
	if seq <= in.hw {
		in.st.add(statRedelivered, 1)
		_ = m.Ack()
		return false
	}
	h, err := in.r.Reset(m.Data())
	if err != nil {
		in.reject(err)
		_ = m.Term()
		in.hw = seq
		return false
	}
	if last, ok := in.sources.get(h.Source); ok && h.Sequence <= last.batch {
		// Stored twice: republished after the deduplication window.
		in.st.add(statDuplicates, 1)
		_ = m.Ack()
		in.hw = seq
		return false
	}
	in.track(h)
	in.cur, in.curSeq, in.have, in.heldSince = m, seq, false, 0
	return true
}

// deliver sends the current batch's messages from where the last call
// stopped. At a full mailbox it keeps the position, extends the batch's ack
// wait now and then, and reports not done; when the batch is delivered it
// acknowledges it and raises the high-water sequence. The high-water
// sequence is raised even if the acknowledgement is lost: the redelivery
// is then skipped.
func (in *Inbound) deliver() (n int, done bool, err error) {
	defer func() { in.st.add(statDelivered, int64(n)) }() // one atomic add per call
	for {
		if !in.have {
			if !in.r.Next() {
				break
			}
			in.have = true
		}
		switch err := send(in.mb, &in.r); {
		case err == nil:
			n++
			in.have = false
		case err == mailbox.ErrBackPressured || errors.Is(err, mailbox.ErrConsumerDead):
			in.st.add(statBackPressured, 1)
			in.hold()
			return n, false, nil
		case errors.Is(err, mailbox.ErrTooLong):
			in.st.add(statDropped, 1)
			in.have = false
		case errors.Is(err, mailbox.ErrClosed):
			return n, false, agent.Terminate(fmt.Errorf("natsbridge: %s: %w", in.cfg.Name, err))
		default:
			return n, false, fmt.Errorf("natsbridge: %s: deliver: %w", in.cfg.Name, err)
		}
	}
	if err := in.ack(in.cur); err != nil {
		in.cfg.Logger.Debug("natsbridge: ack failed", "bridge", in.cfg.Name, "seq", in.curSeq, "err", err)
	}
	in.hw = in.curSeq
	in.cur = nil
	return n, true, nil
}

// hold extends the current batch's ack wait (InProgress) every half AckWait
// while a full mailbox holds it, so that the server does not redeliver it.
func (in *Inbound) hold() {
	now := in.cfg.Clock.Nanos()
	switch {
	case in.heldSince == 0:
		in.heldSince = now
	case now-in.heldSince >= int64(in.cfg.JetStream.AckWait/2):
		_ = in.cur.InProgress()
		in.heldSince = now
	}
}

// OnClose stops delivery: in core mode it unsubscribes and waits for a
// running callback; in JetStream mode it ends the pull request and, if a
// batch is partly delivered, tries for up to a second to deliver the rest
// (the mailbox's consumer may still be draining). A batch left partly
// delivered is not acknowledged: it is delivered again, whole, to the next
// bridge on the consumer, and OnClose returns an error saying so. It then
// waits (at most a second) for the consumer's ack floor to reach the
// high-water sequence, so that the next bridge on the consumer starts after
// it. Last, it frees the counters and closes a connection the bridge opened.
func (in *Inbound) OnClose() error {
	var err error
	if in.sub != nil {
		in.sample()
		_ = in.sub.Unsubscribe()
		in.mu.Lock()
		in.closed = true
		in.mu.Unlock()
	}
	if in.cons != nil {
		in.endFetch()
		for deadline := time.Now().Add(time.Second); in.cur != nil && time.Now().Before(deadline); {
			if _, _, e := in.deliver(); e != nil {
				break
			}
			if in.cur != nil {
				time.Sleep(time.Millisecond)
			}
		}
		if in.cur != nil {
			err = fmt.Errorf("natsbridge: %s: closed with stream sequence %d partly delivered; it will be delivered again", in.cfg.Name, in.curSeq)
		}
		in.settle(time.Now().Add(time.Second))
	}
	in.cancel()
	in.wg.Wait()
	in.st.set(statReconnects, int64(in.nc.Stats().Reconnects))
	in.release()
	return err
}

// settle waits, until deadline, for the consumer's ack floor to reach the
// high-water sequence: acknowledgements are sent without waiting, and a
// bridge started next on the same consumer takes the ack floor as its
// high-water sequence.
func (in *Inbound) settle(deadline time.Time) {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	for !in.nc.IsClosed() {
		info, err := in.cons.Info(ctx)
		if err == nil && info.AckFloor.Stream >= in.hw {
			return
		}
		if ctx.Err() != nil {
			in.cfg.Logger.Warn("natsbridge: closed before the server confirmed the last acknowledgement", "bridge", in.cfg.Name, "seq", in.hw)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (in *Inbound) release() {
	in.cancel()
	in.st.close()
	if in.owned {
		in.nc.Close()
	} else if in.sub != nil {
		_ = in.sub.Unsubscribe()
	}
}
