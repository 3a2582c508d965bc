package errlog

import (
	"fmt"
	"hash/maphash"
	"reflect"
	"strings"
	"unsafe"
)

// Bounds of an observation's identity (see the package documentation).
const (
	// maxFrames is the number of frames of the Record call site's stack
	// that take part in the identity and the text.
	maxFrames = 32
	// maxNodes is the number of errors of the tree (the error and its
	// causes) that take part in the identity and the text.
	maxNodes = 32
)

// Stacker is implemented by errors that carry the stack of the place they
// were made (or of a panic), in the format of runtime/debug.Stack. The
// stack takes part in the error's identity and text, normalised. An error
// whose Error() text embeds such a stack (as runner.PanicError's does: it
// has a Stack field, not a method) is recognised without it.
type Stacker interface {
	Stack() []byte
}

// node is one error of the tree, as Record sees it.
type node struct {
	typ   reflect.Type
	depth int    // 0 for the recorded error, 1 for what it wraps, ...
	msg   string // Error(), with an embedded goroutine stack cut out, trimmed
	stack string // raw carried stack (debug.Stack format), "" if none
}

// key is the identity of an observation being recorded. It lives on
// Record's stack: building it and looking it up allocate nothing for
// errors whose Error() does not.
type key struct {
	pcs       [maxFrames]uintptr
	npc       int
	nodes     [maxNodes]node
	n         int
	truncated bool // the tree has more than maxNodes errors
}

// describe fills k.nodes with err's tree, depth first, in pre-order: the
// error, then what errors.Unwrap returns, or each error of Unwrap() []error
// in order (as errors.Is walks it), up to maxNodes errors. A panic in an
// Error method gives fmt's rendering of it as the message, and one in a
// Stack method counts as no carried stack; a panic in an Unwrap method ends
// the walk (the tree counts as truncated) instead of escaping Record.
func (k *key) describe(err error) {
	type item struct {
		err   error
		depth int
	}
	var todo [maxNodes]item
	todo[0] = item{err, 0}
	t := 1
	defer func() {
		if recover() != nil {
			k.truncated = true
		}
	}()
	for t > 0 {
		t--
		it := todo[t]
		if it.err == nil {
			continue
		}
		if k.n == maxNodes {
			k.truncated = true
			return
		}
		nd := &k.nodes[k.n]
		k.n++
		nd.typ = reflect.TypeOf(it.err)
		nd.depth = it.depth
		nd.msg, nd.stack = message(it.err)
		switch u := it.err.(type) {
		case interface{ Unwrap() error }:
			if c := u.Unwrap(); c != nil {
				if t == len(todo) {
					k.truncated = true
					return
				}
				todo[t] = item{c, it.depth + 1}
				t++
			}
		case interface{ Unwrap() []error }:
			cs := u.Unwrap()
			for i := len(cs) - 1; i >= 0; i-- {
				if cs[i] == nil {
					continue
				}
				if t == len(todo) {
					k.truncated = true
					return
				}
				todo[t] = item{cs[i], it.depth + 1}
				t++
			}
		}
	}
}

// message returns err's Error() text with a carried stack cut out, and the
// raw stack: the error's Stack() if it is a Stacker (and Stack does not
// panic), otherwise a goroutine dump embedded in the text (from a line
// "goroutine N [...").
func message(err error) (msg, stack string) {
	text := safeError(err)
	if s, ok := err.(Stacker); ok {
		raw, ok := safeStack(s)
		if !ok {
			return messageWithDump(text)
		}
		if len(raw) == 0 {
			return strings.TrimSpace(text), ""
		}
		// Only compared and normalised during the Record call, never kept.
		stack = unsafe.String(unsafe.SliceData(raw), len(raw))
		if i := strings.Index(text, stack); i >= 0 {
			pre, post := strings.TrimSpace(text[:i]), strings.TrimSpace(text[i+len(stack):])
			switch {
			case post == "":
				text = pre
			case pre == "":
				text = post
			default:
				text = pre + "\n" + post
			}
		}
		return strings.TrimSpace(text), stack
	}
	return messageWithDump(text)
}

// messageWithDump splits text at an embedded goroutine dump, if any.
func messageWithDump(text string) (msg, stack string) {
	if i := dumpStart(text); i >= 0 {
		return strings.TrimSpace(text[:i]), text[i:]
	}
	return strings.TrimSpace(text), ""
}

// safeStack is s.Stack(), or false if it panics.
func safeStack(s Stacker) (raw []byte, ok bool) {
	defer func() {
		if recover() != nil {
			raw, ok = nil, false
		}
	}()
	return s.Stack(), true
}

// safeError is err.Error(), or fmt's rendering of a panicking Error method
// (a nil pointer receiver, typically).
func safeError(err error) (s string) {
	defer func() {
		if r := recover(); r != nil {
			s = fmt.Sprintf("%%!v(PANIC=Error method: %v)", r)
		}
	}()
	return err.Error()
}

// dumpStart returns the index of the first line of s that starts a
// goroutine dump ("goroutine 12 [running]:"), or -1.
func dumpStart(s string) int {
	const head = "goroutine "
	for i := 0; ; {
		j := strings.Index(s[i:], head)
		if j < 0 {
			return -1
		}
		j += i
		if j == 0 || s[j-1] == '\n' {
			rest := s[j+len(head):]
			d := 0
			for d < len(rest) && rest[d] >= '0' && rest[d] <= '9' {
				d++
			}
			if d > 0 && strings.HasPrefix(rest[d:], " [") {
				return j
			}
		}
		i = j + 1
	}
}

// normaliseStack appends raw (a stack in runtime/debug.Stack format) to dst
// as one line per frame, "\tat function(file:line)\n", as Java prints a
// stack trace: the goroutine header, argument values, PC offsets and
// goroutine numbers are dropped, so the same code path on another
// goroutine, with other arguments, normalises to the same text.
func normaliseStack(dst []byte, raw string) []byte {
	var fn string
	flush := func() {
		if fn != "" {
			dst = appendFrame(dst, fn, "")
			fn = ""
		}
	}
	for raw != "" {
		var line string
		line, raw, _ = strings.Cut(raw, "\n")
		switch {
		case strings.TrimSpace(line) == "" || dumpStart(line) == 0:
			continue
		case line[0] == '\t' || line[0] == ' ':
			loc := strings.TrimSpace(line)
			if i := strings.LastIndex(loc, " +0x"); i >= 0 {
				loc = loc[:i]
			}
			dst = appendFrame(dst, fn, loc)
			fn = ""
		case strings.HasPrefix(line, "..."):
			flush()
			dst = append(dst, '\t')
			dst = append(dst, line...)
			dst = append(dst, '\n')
		default:
			flush()
			fn = stripArgs(line)
		}
	}
	flush()
	return dst
}

func appendFrame(dst []byte, fn, loc string) []byte {
	if rest, ok := strings.CutPrefix(fn, "created by "); ok {
		if i := strings.Index(rest, " in goroutine "); i >= 0 {
			rest = rest[:i]
		}
		dst = append(dst, "\tcreated by "...)
		fn = rest
	} else {
		dst = append(dst, "\tat "...)
	}
	dst = append(dst, fn...)
	dst = append(dst, '(')
	dst = append(dst, loc...)
	return append(dst, ")\n"...)
}

// stripArgs drops the argument list "(0xc000012345, ...)" that ends a
// function line of a goroutine dump; parentheses inside the name, as in
// "pkg.(*T).m", stay.
func stripArgs(line string) string {
	if !strings.HasSuffix(line, ")") {
		return line
	}
	depth := 0
	for i := len(line) - 1; i >= 0; i-- {
		switch line[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return line[:i]
			}
		}
	}
	return line
}

// hash mixes the parts of the identity that are cheap to hash: the call
// site's PCs and each error's message. Types, depths and stacks are
// compared on a hash match.
func (k *key) hash(seed maphash.Seed) uint64 {
	pcs := unsafe.Slice((*byte)(unsafe.Pointer(&k.pcs[0])), k.npc*int(unsafe.Sizeof(k.pcs[0])))
	h := maphash.Bytes(seed, pcs)
	for i := range k.n {
		h = h*0x9E3779B97F4A7C15 ^ maphash.String(seed, k.nodes[i].msg)
	}
	return h ^ uint64(k.n)
}

// observation is the identity of a recorded error, kept in process memory
// (Agrona's in-memory list), and where its record is.
type observation struct {
	offset    int
	pcs       []uintptr
	nodes     []storedNode
	truncated bool
	next      *observation // same hash
}

type storedNode struct {
	typ     reflect.Type
	depth   int
	msg     string
	stacked bool   // carries a stack (which may normalise to "")
	stack   string // normalised
}

// newObservation copies k; stacks are kept normalised.
func newObservation(offset int, k *key) *observation {
	o := &observation{
		offset:    offset,
		pcs:       append([]uintptr(nil), k.pcs[:k.npc]...),
		nodes:     make([]storedNode, k.n),
		truncated: k.truncated,
	}
	for i := range k.n {
		nd := &k.nodes[i]
		o.nodes[i] = storedNode{typ: nd.typ, depth: nd.depth, msg: strings.Clone(nd.msg), stacked: nd.stack != ""}
		if nd.stack != "" {
			o.nodes[i].stack = string(normaliseStack(nil, nd.stack))
		}
	}
	return o
}

// equal reports whether o is the observation k describes. scratch is a
// buffer for normalising k's stacks; equal returns it for reuse.
func (o *observation) equal(k *key, scratch []byte) (bool, []byte) {
	if o.truncated != k.truncated || len(o.pcs) != k.npc || len(o.nodes) != k.n {
		return false, scratch
	}
	for i, pc := range o.pcs {
		if k.pcs[i] != pc {
			return false, scratch
		}
	}
	for i := range o.nodes {
		s, nd := &o.nodes[i], &k.nodes[i]
		if s.typ != nd.typ || s.depth != nd.depth || s.msg != nd.msg || s.stacked != (nd.stack != "") {
			return false, scratch
		}
	}
	for i := range o.nodes {
		if nd := &k.nodes[i]; nd.stack != "" {
			scratch = normaliseStack(scratch[:0], nd.stack)
			if string(scratch) != o.nodes[i].stack {
				return false, scratch
			}
		}
	}
	return true, scratch
}
