//go:build cring

package main

// The C reference of W1, measured in the same run as everything else: a
// minimal C ring with Agrona's protocol, free of anything Go adds. The
// record header's length word is the publication; the consumer zeroes each
// record as it reads it and publishes head once per read; the producer
// stores its tail and re-reads head only when its cached head says full;
// padding at the wrap. One record per publication (cring-write) or 16 per
// claim (cring-batch16); cring-cas is cring-write with the many-to-one
// claim (a compare-and-swap on the tail and the claim marker), and its
// consumer demotes the lines it released as duty's many-to-one consumer
// does (CLDEMOTE where the CPU has it): the many-to-one protocol's own
// cost. The consumer checks every message as the Go checker does. Built
// only with -tags cring (cgo and a C compiler): the default build of
// dutybench needs neither.

/*
#cgo CFLAGS: -O2
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <time.h>

enum { REC = 40, TYPE = 1 };

typedef struct {
	uint8_t *data;
	int64_t cap;
	_Atomic int64_t *tail;
	_Atomic int64_t *head;
} cring;

static inline _Atomic int32_t *len_at(cring *r, int64_t i) { return (_Atomic int32_t *)(r->data + i); }

// cring_demote is CLDEMOTE of the line at p (a hint: it orders nothing);
// called only where Go's prefetch.CanDemote says the CPU has it.
static inline void cring_demote(uint8_t *p) {
#if defined(__x86_64__)
	__asm__ volatile(".byte 0x0f, 0x1c, 0x00" : : "a"(p) : "memory");
#else
	(void)p;
#endif
}

// produce sends n messages, batch records per claim (the last claim takes
// what is left); message corrupt_at (if >= 0) carries a wrong sequence number.
// With cas, the producer claims with a compare-and-swap on the tail and
// writes Agrona's many-to-one claim marker (the negated length) before the
// payload, as a many-to-one ring must: a locked instruction per claim.
static void cring_produce(cring *r, int64_t n, int64_t batch, int64_t corrupt_at, int cas) {
	int64_t tail = 0, head_cache = 0, mask = r->cap - 1;
	for (int64_t i = 0; i < n; i += batch) {
		if (batch > n - i) batch = n - i;
		int64_t aligned = REC * batch;
		for (;;) {
			int64_t idx = tail & mask, to_end = r->cap - idx, required = aligned;
			if (required > to_end) required = to_end + aligned;
			if (required > r->cap - (tail - head_cache)) {
				head_cache = atomic_load_explicit(r->head, memory_order_acquire);
				if (required > r->cap - (tail - head_cache)) continue;
			}
			if (cas) {
				int64_t expect = tail, next = tail + (aligned > to_end ? to_end + aligned : aligned);
				if (!atomic_compare_exchange_strong(r->tail, &expect, next)) return; // one producer: never
			}
			if (aligned > to_end) {
				*(int32_t *)(r->data + idx + 4) = -1;
				atomic_store_explicit(len_at(r, idx), (int32_t)to_end, memory_order_release);
				tail += to_end;
				idx = 0;
			}
			if (cas) atomic_store_explicit(len_at(r, idx), -(int32_t)aligned, memory_order_release);
			for (int64_t j = 0; j < batch; j++) {
				uint8_t *rec = r->data + idx + REC * j;
				int64_t seq = i + j, id = 0;
				if (seq == corrupt_at) seq++;
				if (j > 0) *(int32_t *)rec = REC;
				*(int32_t *)(rec + 4) = TYPE;
				memcpy(rec + 8, &seq, 8);
				memcpy(rec + 16, &id, 8);
				memset(rec + 24, 0, 16);
			}
			atomic_store_explicit(len_at(r, idx), REC, memory_order_release);
			tail += aligned;
			if (!cas) atomic_store_explicit(r->tail, tail, memory_order_release);
			break;
		}
	}
}

// consume reads n messages and returns how many did not match; the first
// mismatch's sequence number and the one expected go to *seq and *want.
// Each record is zeroed as soon as it is read, while its line is in this
// core's cache (a 40-byte record with five word stores). With demote, the
// lines a read released are demoted after head is published, every line
// the released range ends in except a last one it only partly covers (the
// next release demotes that), as duty's many-to-one reader does.
static int64_t cring_consume(cring *r, int64_t n, int demote, int64_t *got, int64_t *want) {
	int64_t head = 0, expected = 0, received = 0, bad = 0, mask = r->cap - 1;
	while (received < n) {
		int64_t idx = head & mask, k = 0;
		while (idx + k < r->cap) {
			int32_t len = atomic_load_explicit(len_at(r, idx + k), memory_order_acquire);
			if (len <= 0) break;
			uint8_t *rec = r->data + idx + k;
			int32_t type = *(int32_t *)(rec + 4);
			if (type == TYPE) {
				int64_t seq, id;
				memcpy(&seq, rec + 8, 8);
				memcpy(&id, rec + 16, 8);
				if (len != REC || seq != expected || id != 0) {
					if (bad++ == 0) { *got = seq; *want = expected; }
					expected = seq;
				}
				expected++;
				received++;
			}
			int64_t aligned = (len + 7) & ~7;
			if (aligned == REC) {
				_Atomic int64_t *w = (_Atomic int64_t *)rec;
				for (int i = 0; i < REC / 8; i++) atomic_store_explicit(&w[i], 0, memory_order_relaxed);
			} else {
				memset(rec, 0, aligned);
			}
			k += aligned;
		}
		if (k > 0) {
			head += k;
			atomic_store_explicit(r->head, head, memory_order_release);
			if (demote) {
				for (int64_t line = idx & ~63; line + 64 <= idx + k; line += 64) cring_demote(r->data + line);
			}
		}
	}
	return bad;
}

// The W3 floor in C (cring-pingpong), the same protocol as the Go floor
// variant: two rings of 40-byte slots whose 8-byte header holds the message
// number + 1, stored with release semantics after the 32-byte payload. No
// zeroing, head, tail or wrap handling: a ping-pong never has more than one
// record in flight. The pinger reads the clock once per round trip, as the
// Go variants do; both sides check every payload.
enum { PP_SLOTS = 65536 / REC };

static inline uint8_t *pp_slot(uint8_t *ring, int64_t i) { return ring + (i % PP_SLOTS) * REC; }

static void pp_send(uint8_t *ring, int64_t i, const uint8_t *payload) {
	uint8_t *at = pp_slot(ring, i);
	memcpy(at + 8, payload, 32);
	atomic_store_explicit((_Atomic int64_t *)at, i + 1, memory_order_release);
}

static const uint8_t *pp_await(uint8_t *ring, int64_t i) {
	uint8_t *at = pp_slot(ring, i);
	while (atomic_load_explicit((_Atomic int64_t *)at, memory_order_acquire) != i + 1) {}
	return at + 8;
}

// pp_bad reports whether payload q is not message i of producer 0; the
// first bad one's sequence number and i go to *got and *want.
static int pp_bad(const uint8_t *q, int64_t i, int64_t bad, int64_t *got, int64_t *want) {
	int64_t seq, id;
	memcpy(&seq, q, 8);
	memcpy(&id, q + 8, 8);
	if (seq == i && id == 0) return 0;
	if (bad == 0) { *got = seq; *want = i; }
	return 1;
}

static inline int64_t pp_now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t pp_ping(uint8_t *ping, uint8_t *pong, int64_t n, int64_t corrupt_at, int64_t *lat, int64_t *got, int64_t *want) {
	uint8_t p[32] = {0};
	int64_t bad = 0, last = pp_now();
	for (int64_t i = 0; i < n; i++) {
		int64_t seq = i == corrupt_at ? i + 1 : i;
		memcpy(p, &seq, 8);
		pp_send(ping, i, p);
		bad += pp_bad(pp_await(pong, i), i, bad, got, want);
		int64_t now = pp_now();
		lat[i] = now - last;
		last = now;
	}
	return bad;
}

static int64_t pp_pong(uint8_t *ping, uint8_t *pong, int64_t n, int64_t *got, int64_t *want) {
	int64_t bad = 0;
	for (int64_t i = 0; i < n; i++) {
		const uint8_t *q = pp_await(ping, i);
		bad += pp_bad(q, i, bad, got, want);
		pp_send(pong, i, q);
	}
	return bad;
}
*/
import "C"

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/dutyrt/duty/internal/prefetch"
	"github.com/dutyrt/duty/internal/record"
	"github.com/dutyrt/duty/ringbuf"
)

// cringVariants are the C reference's variants of workload w.
func cringVariants(w string) []variant {
	switch w {
	case "w1":
		return []variant{
			extra("cring-write", cRingStream(1, false)),
			extra("cring-batch16", cRingStream(batchRecords, false)),
			extra("cring-cas", cRingStream(1, true)),
			extra("cring-cas-to-manytoone", mixedStream(true)),
			extra("manytoone-to-cring", mixedStream(false)),
		}
	case "w3":
		return []variant{extra("cring-pingpong", cPingPong)}
	}
	return nil
}

// newCRing allocates a zeroed ring in C memory (handed to C for the whole
// repetition) and returns its C view, its Go bytes, and the function that
// frees it.
func newCRing() (*C.cring, []byte, func(), error) {
	size := C.size_t(ringCapacity + ringbuf.TrailerLength)
	mem := C.aligned_alloc(128, size)
	if mem == nil {
		return nil, nil, nil, fmt.Errorf("cring: out of memory")
	}
	C.memset(mem, 0, size)
	cr := (*C.cring)(C.malloc(C.size_t(unsafe.Sizeof(C.cring{}))))
	if cr == nil {
		C.free(mem)
		return nil, nil, nil, fmt.Errorf("cring: out of memory")
	}
	*cr = C.cring{
		data: (*C.uint8_t)(mem),
		cap:  ringCapacity,
		tail: (*C.int64_t)(unsafe.Add(mem, ringCapacity+record.TailOffset)),
		head: (*C.int64_t)(unsafe.Add(mem, ringCapacity+record.HeadOffset)),
	}
	free := func() {
		C.free(unsafe.Pointer(cr))
		C.free(mem)
	}
	return cr, unsafe.Slice((*byte)(mem), int(size)), free, nil
}

func cProduce(cr *C.cring, cfg *runConfig, batch int, cas bool) error {
	c := C.int(0)
	if cas {
		c = 1
	}
	C.cring_produce(cr, C.int64_t(cfg.n), C.int64_t(batch), C.int64_t(cfg.corruptAt), c)
	return nil
}

// cConsume reads n messages with the C consumer, demoting released lines
// when demote is set and the CPU can.
func cConsume(cr *C.cring, n int, demote bool) error {
	var got, want C.int64_t
	d := C.int(0)
	if demote && prefetch.CanDemote() {
		d = 1
	}
	if bad := C.cring_consume(cr, C.int64_t(n), d, &got, &want); bad != 0 {
		return fmt.Errorf("%w: C ring: %d messages did not match, the first: producer 0 sequence %d, want %d", errPayload, bad, got, want)
	}
	return nil
}

// cRingStream is cring-write (batch 1), cring-batch16 and, with cas,
// cring-cas.
//
//go:noinline // a variant factory: see runFunc
func cRingStream(batch int, cas bool) runFunc {
	return func(cfg *runConfig) (time.Duration, error) {
		cr, _, free, err := newCRing()
		if err != nil {
			return 0, err
		}
		defer free()
		return stream(cfg, newTeam(cfg.place), nil, func() error { return cConsume(cr, cfg.n, cas) },
			func() error { return cProduce(cr, cfg, batch, cas) })
	}
}

// mixedStream pairs one side of the C ring with one side of duty's
// many-to-one ring over the same memory (the layouts are the same): the C
// producer (CAS claim) with ManyToOne.Read and the checker, or
// ManyToOne.Write with the C consumer. It tells which side limits
// manytoone-write.
//
//go:noinline // a variant factory: see runFunc
func mixedStream(cProducer bool) runFunc {
	return func(cfg *runConfig) (time.Duration, error) {
		cr, mem, free, err := newCRing()
		if err != nil {
			return 0, err
		}
		defer free()
		m, err := ringbuf.NewManyToOne(mem)
		if err != nil {
			return 0, err
		}
		t := newTeam(cfg.place)
		if cProducer {
			c := newChecker(1)
			return stream(cfg, t, c, func() error { return pollUntil(t, c, cfg.n, nil, readAll(m, c)) },
				func() error { return cProduce(cr, cfg, 1, true) })
		}
		return stream(cfg, t, nil, func() error { return cConsume(cr, cfg.n, true) },
			func() error { return produce(t, m, cfg.n, 0, cfg.corruptAt, ringbuf.ErrFull, nil) })
	}
}

// cPingPong is cring-pingpong: the C pinger in slot 0 records the round
// trips into cfg.lat (Go memory C only writes during the call).
func cPingPong(cfg *runConfig) (time.Duration, error) {
	ping, _, freePing, err := newCRing()
	if err != nil {
		return 0, err
	}
	defer freePing()
	pong, _, freePong, err := newCRing()
	if err != nil {
		return 0, err
	}
	defer freePong()
	t := newTeam(cfg.place)
	n, lat := cfg.n, cfg.lat[:cfg.n]
	t.spawn(0, func() error {
		var got, want C.int64_t
		bad := C.pp_ping(ping.data, pong.data, C.int64_t(n), C.int64_t(cfg.corruptAt), (*C.int64_t)(unsafe.Pointer(unsafe.SliceData(lat))), &got, &want)
		t.finish()
		if bad != 0 {
			return fmt.Errorf("%w: C ping-pong: %d pongs did not match, the first: producer 0 sequence %d, want %d", errPayload, bad, got, want)
		}
		return nil
	})
	t.spawn(1, func() error {
		var got, want C.int64_t
		if bad := C.pp_pong(ping.data, pong.data, C.int64_t(n), &got, &want); bad != 0 {
			return fmt.Errorf("%w: C ping-pong: %d pings did not match, the first: producer 0 sequence %d, want %d", errPayload, bad, got, want)
		}
		return nil
	})
	return t.run(cfg.timeout)
}
