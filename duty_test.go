package duty_test

import (
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty"
	"github.com/dutyrt/duty/broadcast"
	"github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/errlog"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/ringbuf"
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

// A corruption found deep in a layer reaches the caller of the layer above
// still marked: a mailbox over a ring whose records another process
// scribbled over reports it as mailbox.ErrCorrupt, wrapping
// ringbuf.ErrCorrupt, and as duty.ErrCorrupt.
func ExampleErrCorrupt() {
	mb, _ := mailbox.New(mailbox.Config{Capacity: mailbox.MinCapacity})
	_ = mb.Send(1, []byte("hello"))
	buf := mb.Ring().Buffer()
	buf[0], buf[1] = 0xff, 0x7f // a record length no producer writes
	_, err := mb.Drain(func(*mailbox.Message) mailbox.Action { return mailbox.Continue }, 10)
	fmt.Println(errors.Is(err, duty.ErrCorrupt), errors.Is(err, mailbox.ErrCorrupt), errors.Is(err, ringbuf.ErrCorrupt))
	// Output: true true true
}

// layer ranks every library package of the module: a package may import
// only packages of a lower rank. Internal packages are at the bottom; the
// commands and examples above everything. A new package gets a rank here,
// so that the layering is a decision, not an accident.
var layer = map[string]int{
	"internal/corrupt": 0, "internal/gcout": 0, "internal/x86": 0,
	"internal/layoutdoc": 0, "internal/buildtags": 0, "internal/pad": 0, "internal/procinfo": 0,
	"internal/childtest": 0,
	"internal/atomicbuf": 1, "internal/prefetch": 1, "internal/ticks": 1,
	"internal/record": 2,
	"":                1, // the root package: the corruption marker
	"zmtp":            5,
	"idle":            2, "clock": 2, "timer": 2,
	"agent": 3, "ringbuf": 3, "broadcast": 3, "queue": 3, "counters": 3, "errlog": 3, "histogram": 3,
	"mailbox": 4, "runner": 4,
	"ipc": 5, "journal": 5,
	"message":         5,
	"dutyfx":          7,
	"ipc/publication": 6,
	"natsbridge":      7, "natsbridge/natsfx": 8, "journal/pubrecord": 7,
}

// TestImportGraphIsLayered: no package imports one of its own layer or
// above (no back-edge, hidden or not), and every library package has a
// layer.
func TestImportGraphIsLayered(t *testing.T) {
	const module = "github.com/dutyrt/duty"
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if strings.HasPrefix(path, ".") && path != "." || strings.HasPrefix(path, "cmd") ||
			strings.HasPrefix(path, "examples") || strings.Contains(path, "testdata") || path == "docs" {
			if path != "." {
				return filepath.SkipDir
			}
		}
		files, _ := filepath.Glob(filepath.Join(path, "*.go"))
		pkg := strings.TrimPrefix(filepath.ToSlash(path), ".")
		var imports []string
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
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
		if len(files) == 0 {
			return nil
		}
		rank, ok := layer[pkg]
		require.True(t, ok, "package %q has no layer: give it one in duty_test.go", pkg)
		for _, im := range imports {
			r, ok := layer[im]
			require.True(t, ok, "%q imports %q, which has no layer", pkg, im)
			require.Less(t, r, rank, "%q (layer %d) imports %q (layer %d): an edge that does not go down", pkg, rank, im, r)
		}
		return nil
	})
	require.NoError(t, err)
}
