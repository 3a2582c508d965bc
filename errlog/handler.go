package errlog

import (
	"context"
	"log/slog"
)

// fullMessage is what Handler logs when the log has no room for an error:
// Agrona's LoggingErrorHandler message.
const fullMessage = "error log is full, consider increasing length of error buffer"

// Handler returns an error handler (a func(error), as runner.WithErrorHandler
// takes) that records every error in log, like Agrona's LoggingErrorHandler.
// An error the log has no room for goes to next, or, if next is nil, to
// slog.Default at level Error with Agrona's LoggingErrorHandler message
// ("error log is full, ..."). The handler is safe for concurrent use. A
// nil log (a read-only file's) records nothing: every error is forwarded.
// The observation's call site is the handler's caller, the same for every
// error of one runner, so those errors are told apart by their types and
// messages (and a panic's stack) only.
func Handler(log *Log, next func(error)) func(error) {
	return func(err error) {
		if err == nil || (log != nil && log.record(err, 1)) {
			return
		}
		if next != nil {
			next(err)
			return
		}
		slog.Default().LogAttrs(context.Background(), slog.LevelError, "errlog: "+fullMessage, slog.Any("err", err))
	}
}
