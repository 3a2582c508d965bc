package errlog

import (
	"context"
	"log/slog"
)

// FullMessage is what Handler logs when the log has no room for an error:
// Agrona's LoggingErrorHandler message.
const FullMessage = "error log is full, consider increasing length of error buffer"

// Handler returns an error handler (a func(error), as runner.WithErrorHandler
// takes) that records every error in log, like Agrona's LoggingErrorHandler.
// An error the log has no room for goes to next, or, if next is nil, to
// slog.Default at level Error with FullMessage (Agrona prints to stderr).
// The handler is safe for concurrent use, as the Log is.
//
// The observation's call site is the handler's caller: for a runner, the
// place in the runner that reports the agent's errors, the same for every
// error of that runner. Errors from one runner are then told apart by
// their types and messages (and a panic's stack), not by where they were
// made: Go errors do not record that.
//
// A nil log records nothing: every error goes to next (or slog), as if the
// log were full. A file opened read-only has no Log (ErrorLogFile.Log is
// nil), so its Handler only forwards.
func Handler(log *Log, next func(error)) func(error) {
	return func(err error) {
		if err == nil || (log != nil && log.record(err, 1)) {
			return
		}
		if next != nil {
			next(err)
			return
		}
		slog.Default().LogAttrs(context.Background(), slog.LevelError, "errlog: "+FullMessage, slog.Any("err", err))
	}
}
