package duty_test

import (
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty"
	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/broadcast"
	"github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/errlog"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/ipc/publication"
	"github.com/dutyrt/duty/journal"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/ringbuf"
	"github.com/dutyrt/duty/runner"
	"github.com/dutyrt/duty/zmtp"
)

// Every package's corruption sentinel answers "was this corruption?" with
// the one marker, wrapped or not, and keeps its own identity.
func TestEveryCorruptionSentinelMatchesTheMarker(t *testing.T) {
	sentinels := map[string]error{
		"ringbuf":       ringbuf.ErrCorrupt,
		"broadcast":     broadcast.ErrCorrupt,
		"counters":      counters.ErrCorrupt,
		"errlog":        errlog.ErrCorrupt,
		"ipc":           ipc.ErrCorrupt,
		"mailbox":       mailbox.ErrCorrupt,
		"mailbox frame": mailbox.ErrCorruptFrame,
	}
	for name, s := range sentinels {
		wrapped := fmt.Errorf("%w: at 64: %w", s, errors.New("detail"))
		require.ErrorIs(t, wrapped, duty.ErrCorrupt, name)
		require.ErrorIs(t, wrapped, s, name)
		for other, o := range sentinels {
			if other != name {
				require.NotErrorIs(t, s, o, "%s is not %s", name, other)
			}
		}
	}
	require.NotErrorIs(t, mailbox.ErrBackPressured, duty.ErrCorrupt)
}

// Every package's closed sentinel answers "was it closed?" with the one
// root, wrapped or not, and keeps its own identity.
func TestEveryClosedSentinelMatchesTheRoot(t *testing.T) {
	sentinels := map[string]error{
		"agent":       agent.ErrClosed,
		"ipc":         ipc.ErrClosed,
		"journal":     journal.ErrClosed,
		"mailbox":     mailbox.ErrClosed,
		"publication": publication.ErrClosed,
		"runner":      runner.ErrClosed,
		"zmtp":        zmtp.ErrClosed,
	}
	for name, s := range sentinels {
		wrapped := fmt.Errorf("send: %w", s)
		require.ErrorIs(t, wrapped, duty.ErrClosed, name)
		require.ErrorIs(t, wrapped, s, name)
		require.NotErrorIs(t, wrapped, duty.ErrCorrupt, name)
		for other, o := range sentinels {
			if other != name {
				require.NotErrorIs(t, s, o, "%s is not %s", name, other)
			}
		}
	}
	require.NotErrorIs(t, mailbox.ErrCorrupt, duty.ErrClosed)
}

// A corruption found in shared memory reaches the caller still marked: a
// ring whose records another process scribbled over reports it as
// ringbuf.ErrCorrupt and as duty.ErrCorrupt, and never as a closed ring.
func ExampleErrCorrupt() {
	buf, _ := ringbuf.Allocate(1024)
	r, _ := ringbuf.NewManyToOne(buf)
	_ = r.Write(1, []byte("hello"))
	buf[0], buf[1] = 0xff, 0x7f // a record length no producer writes
	_, err := r.Read(func(int32, []byte) {}, 10)
	fmt.Println(errors.Is(err, duty.ErrCorrupt), errors.Is(err, ringbuf.ErrCorrupt), errors.Is(err, duty.ErrClosed))
	// Output: true true false
}

// layer ranks every library package of the module: a package may import
// only packages of a lower rank. Internal packages are at the bottom; the
// commands and examples above everything. A new package gets a rank here,
// so that the layering is a decision, not an accident; docs/architecture.md
// tells the layers in words.
var layer = map[string]int{
	// 0-3: internal, under the public packages that build on them.
	"internal/sentinel": 0, "internal/gcout": 0, "internal/x86": 0, "internal/layoutdoc": 0,
	"internal/buildtags": 0, "internal/pad": 0, "internal/procinfo": 0, "internal/childtest": 0, "internal/mmapfile": 0, "internal/futex": 0, "internal/nanosleep": 0,
	"internal/fileapi": 0, "internal/countertype": 0, "internal/mailboxdef": 0,
	"internal/atomicbuf": 1, "internal/prefetch": 1, "internal/ticks": 1, "internal/zmtpwire": 1, "internal/doorbell": 1,
	"internal/record": 2, "internal/zmtpcurve": 2, "internal/zmtpqueue": 2, "internal/journalfile": 2, "internal/ipcfile": 2,
	"internal/mailboxframe": 3,
	// 1: the root package, the corruption marker.
	"": 1,
	// 2: leaves: idling, time, deadlines.
	"idle": 2, "clock": 2, "timer": 2,
	// 3: the agent contract; the structures over a byte slice; object queues.
	"agent": 3, "ringbuf": 3, "broadcast": 3, "counters": 3, "errlog": 3, "histogram": 3, "queue": 3,
	// 4: an agent's mailbox; the thread that runs an agent.
	"mailbox": 4, "runner": 4,
	// 5: typed messages, shared files, the durable log, ZeroMQ's protocol.
	"message": 5, "ipc": 5, "journal": 5, "zmtp": 5,
	// 6 and up: what builds on files and runners.
	"ipc/publication": 6, "dutyfx": 6, "journal/replay": 6,
	"natsbridge": 7, "journal/pubrecord": 7,
	"natsbridge/natsfx": 8,
}

const module = "github.com/dutyrt/duty"

// libraryImports returns every library package of the module (the root,
// internal ones included; not cmd, examples or testdata) with the module
// packages its non-test files import.
func libraryImports(t *testing.T) map[string][]string {
	t.Helper()
	graph := make(map[string][]string)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if path != "." && (strings.HasPrefix(path, ".") || strings.HasPrefix(path, "cmd") ||
			strings.HasPrefix(path, "examples") || strings.Contains(path, "testdata") || path == "docs") {
			return filepath.SkipDir
		}
		files, _ := filepath.Glob(filepath.Join(path, "*.go"))
		pkg := strings.TrimPrefix(filepath.ToSlash(path), ".")
		imports := []string{}
		source := false
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			source = true
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, im := range af.Imports {
				p, _ := strconv.Unquote(im.Path.Value)
				if p == module || strings.HasPrefix(p, module+"/") {
					imports = append(imports, strings.TrimPrefix(strings.TrimPrefix(p, module), "/"))
				}
			}
		}
		if source {
			graph[pkg] = imports
		}
		return nil
	})
	require.NoError(t, err)
	return graph
}

// TestImportGraphIsLayered: no package imports one of its own layer or
// above (no back-edge, hidden or not), and every library package has a
// layer.
func TestImportGraphIsLayered(t *testing.T) {
	graph := libraryImports(t)
	for pkg, imports := range graph {
		rank, ok := layer[pkg]
		require.True(t, ok, "package %q has no layer: give it one in duty_test.go", pkg)
		for _, im := range imports {
			r, ok := layer[im]
			require.True(t, ok, "%q imports %q, which has no layer", pkg, im)
			require.Less(t, r, rank, "%q (layer %d) imports %q (layer %d): an edge that does not go down", pkg, rank, im, r)
		}
	}
	for pkg := range layer {
		_, ok := graph[pkg]
		require.True(t, ok, "layer names %q, which is not a package", pkg)
	}
}

// TestFoldersFollowLayers: a package in the folder of another builds on it
// (ranks above it), so the tree reads as the layers do; a structure a
// lower layer needs is not filed under a package above it.
func TestFoldersFollowLayers(t *testing.T) {
	for pkg := range libraryImports(t) {
		if pkg == "" || !strings.Contains(pkg, "/") {
			continue
		}
		parent := pkg[:strings.LastIndex(pkg, "/")]
		pr, ok := layer[parent]
		if !ok {
			continue // a folder that is no package, such as internal
		}
		require.Greater(t, layer[pkg], pr, "%q (layer %d) is filed under %q (layer %d): move it where its layer is", pkg, layer[pkg], parent, pr)
	}
}

// TestArchitectureDiagramIsTheImportGraph: docs/architecture.md's package
// picture names every public library package and draws exactly the
// imports between them, no more and no fewer.
func TestArchitectureDiagramIsTheImportGraph(t *testing.T) {
	doc, err := os.ReadFile("docs/architecture.md")
	require.NoError(t, err)
	text := string(doc)
	i := strings.Index(text, "```mermaid\n")
	require.GreaterOrEqual(t, i, 0, "docs/architecture.md has no mermaid picture")
	block := text[i:]
	block = block[:strings.Index(block[3:], "```")+3]

	node := regexp.MustCompile(`(\w+)\[([^\]<]+)`)
	edge := regexp.MustCompile(`^\s*(\w+)(?:\[[^\]]*\])?\s*-->\s*(\w+)\s*$`)
	pkgOf := map[string]string{}
	for _, m := range node.FindAllStringSubmatch(block, -1) {
		p := m[2]
		if p == "duty" {
			p = ""
		}
		pkgOf[m[1]] = p
	}
	drawn := map[string]bool{}
	for _, line := range strings.Split(block, "\n") {
		if m := edge.FindStringSubmatch(line); m != nil {
			from, ok1 := pkgOf[m[1]]
			to, ok2 := pkgOf[m[2]]
			require.True(t, ok1 && ok2, "the picture's arrow %q names a node it does not define", strings.TrimSpace(line))
			drawn[from+" -> "+to] = true
		}
	}
	real := map[string]bool{}
	public := map[string]bool{}
	for pkg, imports := range libraryImports(t) {
		if strings.HasPrefix(pkg, "internal/") {
			continue
		}
		public[pkg] = true
		for _, im := range imports {
			if !strings.HasPrefix(im, "internal/") {
				real[pkg+" -> "+im] = true
			}
		}
	}
	for pkg := range public {
		found := false
		for _, p := range pkgOf {
			found = found || p == pkg
		}
		require.True(t, found, "docs/architecture.md's picture lacks package %q", pkg)
	}
	for e := range real {
		require.True(t, drawn[e], "docs/architecture.md's picture lacks the import %s", e)
	}
	for e := range drawn {
		require.True(t, real[e], "docs/architecture.md's picture draws %s, which the code does not import", e)
	}
}
