package runner

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// The default error handler logs each distinct error once, then again
// only at every power of ten of its count and at most once a minute
// beside that, with the count and the first and last times: an agent that
// fails on every cycle writes a handful of lines, not one per cycle.
// Two errors are the same when their dynamic type and the first line of
// their message are (a panic's message carries its goroutine's stack
// after the first line).
const (
	// distinctErrors bounds the errors remembered; past it, errors not
	// yet seen are logged every time, marked as such.
	distinctErrors = 256
	// repeatLogEvery is the longest a recurring error goes unlogged.
	repeatLogEvery = time.Minute
)

type seenError struct {
	count       int64
	first, last time.Time
	logged      time.Time // when the last line about it was written
	nextCount   int64     // the count at which to log again
}

type distinctLogger struct {
	role string
	now  func() time.Time
	mu   sync.Mutex
	seen map[string]*seenError
}

func defaultHandler(role string) func(error) {
	l := &distinctLogger{role: role, now: time.Now, seen: make(map[string]*seenError)}
	return l.handle
}

func (l *distinctLogger) handle(err error) {
	msg := err.Error()
	first, _, _ := strings.Cut(msg, "\n")
	key := fmt.Sprintf("%T\x00%s", err, first)
	now := l.now()
	l.mu.Lock()
	e, ok := l.seen[key]
	if !ok {
		if len(l.seen) >= distinctErrors {
			l.mu.Unlock()
			l.log(err, 1, now, now, "not deduplicated: too many distinct errors")
			return
		}
		e = &seenError{first: now, nextCount: 10}
		l.seen[key] = e
	}
	e.count++
	e.last = now
	if ok && e.count < e.nextCount && now.Sub(e.logged) < repeatLogEvery {
		l.mu.Unlock()
		return
	}
	for e.count >= e.nextCount {
		e.nextCount *= 10
	}
	e.logged = now
	count, firstAt := e.count, e.first
	l.mu.Unlock()
	l.log(err, count, firstAt, now, "")
}

func (l *distinctLogger) log(err error, count int64, first, last time.Time, note string) {
	attrs := []slog.Attr{
		slog.String("role", l.role), slog.Any("err", err),
		slog.Int64("count", count), slog.Time("first", first), slog.Time("last", last),
	}
	if note != "" {
		attrs = append(attrs, slog.String("note", note))
	}
	slog.Default().LogAttrs(context.Background(), slog.LevelError, "duty: agent error", attrs...)
}
