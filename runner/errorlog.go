package runner

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"sync"
	"time"
)

// The default error handler (errorLogger) logs through slog.Default at
// level Error. It deduplicates errors by identity, limits the lines each
// agent writes, and accounts for every error it does not write:
//
//   - Identity. Two errors are the same when the dynamic types along their
//     Unwrap chains are (the first maxChain of them, and the chain's length)
//     and the first lines of their innermost errors' messages are, once
//     every word (run of letters and digits) containing a digit is masked.
//     The innermost error is where the chain of single Unwraps ends (a
//     sentinel, a *PanicError of a non-error value, an errors.Join, ...).
//     So a sentinel wrapped with fmt.Errorf("order %d: %w", id, ErrFull)
//     is one error whatever the id and the wrapper's text; "order 7
//     rejected" and "order 8 rejected" are one error; two panics at one
//     place are one error (the stack comes after the first line).
//   - Repeats. An identity is logged when first seen, again when its count
//     reaches each power of ten, and at least once a minute while it
//     recurs.
//   - Bound. Lines are rationed per agent by a token bucket (logBurst at
//     once, logRate a second sustained); a line due without a token is not
//     written. At most distinctErrors identities are remembered; further
//     ones share one entry, so memory is bounded too.
//   - Accounting. Each error line's count is the errors it stands for: this
//     one and those of its identity not written since its previous line.
//     Errors not written are summed into a line "duty: agent errors not
//     logged" (count, identities, the latest such error), written at most
//     once every summaryEvery: when an error comes that long after the
//     previous summary, or by a timer once errors stop coming, and when the
//     agent stops. The counts of all lines add up to the errors handled,
//     and an agent writes at most logBurst + logRate·T + T/summaryEvery + 1
//     lines in a span T.
//
// Handling an error of an identity already remembered allocates nothing
// beyond what the error's own Error method does (nothing for sentinels and
// fmt's wrappers) when no line is written.
const (
	distinctErrors = 256
	repeatLogEvery = time.Minute
	logRate        = 5  // lines a second, sustained, per agent
	logBurst       = 10 // lines at once
	summaryEvery   = 10 * time.Second
	maxChain       = 8  // types of an Unwrap chain that make its identity
	maxUnwrap      = 64 // bound on an Unwrap chain walked (a cyclic one ends)
	maxShapeBytes  = 256
)

// errorKey is an error's identity (see above).
type errorKey struct {
	chain [maxChain]reflect.Type
	depth int
	shape uint64 // FNV-1a of the masked first line of the innermost message
}

type seenError struct {
	total     int64 // errors of this identity
	unlogged  int64 // of them, not accounted for by a line yet
	first     time.Time
	last      time.Time
	logged    time.Time // when the last line about it was written
	nextCount int64     // the total at which to log again
}

type errorLogger struct {
	role  string
	now   func() time.Time
	timed bool          // summarise after a quiet period with a timer
	every time.Duration // summaryEvery; tests shorten it

	mu       sync.Mutex
	seen     map[errorKey]*seenError
	overflow seenError // identities past distinctErrors
	tat      time.Time // token bucket (GCRA): the theoretical arrival time
	unlogged int64     // errors not accounted for by any line yet
	sample   error     // the latest of them
	summary  time.Time // when the last summary was written (or the first error came)
	timer    *time.Timer
	armed    bool
	closed   bool
}

func newErrorLogger(role string) *errorLogger {
	return &errorLogger{role: role, now: time.Now, timed: true, every: summaryEvery, seen: make(map[errorKey]*seenError)}
}

// handle is the default error handler.
func (l *errorLogger) handle(err error) {
	k := identify(err)
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.summary.IsZero() {
		l.summary = now
	}
	e, overflow := l.entry(k)
	e.total++
	e.last = now
	if e.total == 1 {
		e.first, e.nextCount = now, 10
	}
	due := e.total == 1 || e.total >= e.nextCount || now.Sub(e.logged) >= repeatLogEvery
	if due && l.take(now) {
		count := e.unlogged + 1
		l.unlogged -= e.unlogged
		e.unlogged = 0
		for e.total >= e.nextCount {
			e.nextCount *= 10
		}
		e.logged = now
		l.logError(err, e, count, overflow)
	} else {
		e.unlogged++
		l.unlogged++
		l.sample = err
	}
	if l.unlogged == 0 {
		return
	}
	switch {
	case l.closed || now.Sub(l.summary) >= l.every:
		l.summarize(now)
	case l.timed && !l.armed:
		l.armed = true
		if l.timer == nil {
			l.timer = time.AfterFunc(l.every, l.onTimer)
		} else {
			l.timer.Reset(l.every)
		}
	}
}

// entry returns the entry of k, making it if there is room; past
// distinctErrors identities, the shared overflow entry.
func (l *errorLogger) entry(k errorKey) (*seenError, bool) {
	if e, ok := l.seen[k]; ok {
		return e, false
	}
	if len(l.seen) >= distinctErrors {
		return &l.overflow, true
	}
	e := &seenError{}
	l.seen[k] = e
	return e, false
}

// take takes a token from the bucket if there is one at now.
func (l *errorLogger) take(now time.Time) bool {
	const interval = time.Second / logRate
	if l.tat.Before(now) {
		l.tat = now
	}
	if l.tat.Sub(now) > (logBurst-1)*interval {
		return false
	}
	l.tat = l.tat.Add(interval)
	return true
}

// onTimer writes the summary of errors left unaccounted for once errors
// stopped coming; if one was written since the timer was armed, it waits
// for the rest of summaryEvery after it, so that summaries stay at least
// summaryEvery apart.
func (l *errorLogger) onTimer() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.armed = false
	if l.unlogged == 0 || l.closed {
		return
	}
	now := l.now()
	if wait := l.every - now.Sub(l.summary); wait > 0 {
		l.armed = true
		l.timer.Reset(wait)
		return
	}
	l.summarize(now)
}

// close writes the last summary, if errors are unaccounted for, and stops
// the timer. Called once the agent has stopped and its last error was
// handled.
func (l *errorLogger) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.timer != nil {
		l.timer.Stop()
	}
	if l.unlogged > 0 {
		l.summarize(l.now())
	}
}

// summarize writes the line accounting for the errors not logged since the
// previous one.
func (l *errorLogger) summarize(now time.Time) {
	identities := 0
	for _, e := range l.seen {
		if e.unlogged > 0 {
			identities++
			e.unlogged = 0
		}
	}
	if l.overflow.unlogged > 0 {
		identities++
		l.overflow.unlogged = 0
	}
	slog.Default().LogAttrs(context.Background(), slog.LevelError, "duty: agent errors not logged",
		slog.String("role", l.role), slog.Int64("count", l.unlogged), slog.Int("identities", identities),
		slog.Any("err", l.sample), slog.Time("since", l.summary), slog.Time("until", now))
	l.unlogged, l.sample, l.summary = 0, nil, now
}

func (l *errorLogger) logError(err error, e *seenError, count int64, overflow bool) {
	attrs := []slog.Attr{
		slog.String("role", l.role), slog.Any("err", err), slog.Int64("count", count),
		slog.Int64("total", e.total), slog.Time("first", e.first), slog.Time("last", e.last),
	}
	if overflow {
		attrs = append(attrs, slog.String("note", "too many distinct errors: counted together"))
	}
	slog.Default().LogAttrs(context.Background(), slog.LevelError, "duty: agent error", attrs...)
}

// identify returns err's identity (see the rules above errorLogger).
func identify(err error) errorKey {
	var k errorKey
	leaf := err
	for i := 0; i < maxUnwrap; i++ {
		if k.depth < maxChain {
			k.chain[k.depth] = reflect.TypeOf(leaf)
		}
		k.depth++
		next := errors.Unwrap(leaf) // nil for an Unwrap() []error: the chain ends there
		if next == nil {
			break
		}
		leaf = next
	}
	k.shape = shape(leaf.Error())
	return k
}

// shape hashes the first line of msg (up to maxShapeBytes) with every word
// that contains a digit replaced by '#'.
func shape(msg string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	add := func(b byte) { h = (h ^ uint64(b)) * prime }
	n := min(len(msg), maxShapeBytes)
	for i := 0; i < n; {
		c := msg[i]
		if c == '\n' {
			break
		}
		if !isWordByte(c) {
			add(c)
			i++
			continue
		}
		j, digit := i, false
		for j < n && isWordByte(msg[j]) {
			digit = digit || (msg[j] >= '0' && msg[j] <= '9')
			j++
		}
		if digit {
			add('#')
		} else {
			for ; i < j; i++ {
				add(msg[i])
			}
		}
		i = j
	}
	return h
}

func isWordByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}
