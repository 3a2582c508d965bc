package errlog

import (
	"bytes"
	"runtime"
	"slices"
	"strconv"
	"unicode/utf8"
)

// encode renders an observation as text, in the manner of a Java stack
// trace (Agrona stores Throwable.printStackTrace's output):
//
//	*fmt.wrapError: load config: open app.toml: no such file or directory
//		at main.loadConfig(/src/app/main.go:42)
//		at main.main(/src/app/main.go:17)
//	caused by: *fs.PathError: open app.toml: no such file or directory
//	caused by: syscall.Errno: no such file or directory
//
// The first line is the recorded error's dynamic type and message; the
// "at" lines are the stack of the Record call. Each error it wraps follows
// in pre-order as a "caused by" line (indented two spaces per level below
// the first, when a multi-error makes the tree branch). An error carrying a
// stack (Stacker, or a goroutine dump in its message) is followed by that
// stack, normalised; for the recorded error itself the Record call's stack
// then comes after a "recorded at:" line.
//
// The text is valid UTF-8: a run of invalid bytes (a message may hold any
// bytes, a file name for one) becomes U+FFFD.
//
// encode stops, returning false, as soon as the text is known to be longer
// than limit bytes, so that an error too large for the room left in the log
// costs no allocation of its size.
func encode(dst []byte, k *key, limit int) ([]byte, bool) {
	start := len(dst)
	over := func() bool { return len(dst)-start > limit }
	branched := false
	for i := range k.n {
		if k.nodes[i].depth != i {
			branched = true
		}
	}
	for i := range k.n {
		nd := &k.nodes[i]
		if i > 0 {
			if branched {
				for range nd.depth - 1 {
					dst = append(dst, "  "...)
				}
			}
			dst = append(dst, "caused by: "...)
		}
		dst = append(dst, nd.typ.String()...)
		dst = append(dst, ": "...)
		if len(dst)-start+len(nd.msg) > limit {
			return dst, false
		}
		dst = append(dst, nd.msg...)
		dst = append(dst, '\n')
		if nd.stack != "" {
			dst = normaliseStack(dst, nd.stack)
			if i == 0 {
				dst = append(dst, "recorded at:\n"...)
			}
		}
		if i == 0 {
			dst = appendCallers(dst, k.pcs[:k.npc])
		}
		if over() {
			return dst, false
		}
	}
	if k.truncated {
		dst = append(dst, "caused by: ... (more errors not shown)\n"...)
	}
	if !utf8.Valid(dst[start:]) {
		dst = append(dst[:start], bytes.ToValidUTF8(dst[start:], []byte("\uFFFD"))...)
	}
	return dst, !over()
}

// appendCallers appends the frames of pcs (from runtime.Callers), one
// "\tat function(file:line)" line each, innermost first.
func appendCallers(dst []byte, pcs []uintptr) []byte {
	if len(pcs) == 0 {
		return dst
	}
	// A copy: CallersFrames keeps its argument, which would move the
	// caller's key (on Record's stack) to the heap on every call.
	frames := runtime.CallersFrames(slices.Clone(pcs))
	for {
		f, more := frames.Next()
		dst = append(dst, "\tat "...)
		dst = append(dst, f.Function...)
		dst = append(dst, '(')
		dst = append(dst, f.File...)
		dst = append(dst, ':')
		dst = strconv.AppendInt(dst, int64(f.Line), 10)
		dst = append(dst, ")\n"...)
		if !more {
			return dst
		}
	}
}
