package layoutdoc

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// row is a table row of docs/layouts.md that states a constant: its
// package-qualified name in backquotes, then its value.
var row = regexp.MustCompile("(?m)^\\| `([a-z]+\\.[A-Za-z]+)` \\| (-?[0-9]+) \\|")

// Rows returns every constant docs/layouts.md states, by package-qualified
// name ("ringbuf.HeaderLength", "publication.slotLength"). It finds the
// page by walking up from the working directory (a test's: its package's
// directory) to the module root, the directory with go.mod, and fails the
// test if there is none, if the page cannot be read, or if it states a
// name twice.
func Rows(t testing.TB) map[string]int64 {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("layoutdoc: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("layoutdoc: no go.mod above the working directory")
		}
		dir = parent
	}
	page, err := os.ReadFile(filepath.Join(dir, "docs", "layouts.md"))
	if err != nil {
		t.Fatalf("layoutdoc: %v", err)
	}
	rows := map[string]int64{}
	for _, m := range row.FindAllStringSubmatch(string(page), -1) {
		v, err := strconv.ParseInt(m[2], 10, 64)
		if err != nil {
			t.Fatalf("layoutdoc: docs/layouts.md: %s: %v", m[1], err)
		}
		if _, dup := rows[m[1]]; dup {
			t.Fatalf("layoutdoc: docs/layouts.md lists %s twice", m[1])
		}
		rows[m[1]] = v
	}
	return rows
}

// Check fails the test unless the rows of docs/layouts.md for package pkg
// (the names "pkg.X") are exactly the names in code, each with the value
// code gives it. The names in code are the constants' names, with or
// without the "pkg." prefix. A package whose layout constants are
// unexported calls it from its own internal test, passing them by name;
// the central test in this package skips the rows of such packages.
func Check(t testing.TB, pkg string, code map[string]int64) {
	t.Helper()
	prefix := pkg + "."
	want := make(map[string]int64, len(code))
	for name, v := range code {
		if !strings.HasPrefix(name, prefix) {
			name = prefix + name
		}
		want[name] = v
	}
	for name, v := range Rows(t) {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		c, ok := want[name]
		switch {
		case !ok:
			t.Errorf("docs/layouts.md lists %s, which the code does not give", name)
		case c != v:
			t.Errorf("docs/layouts.md: %s is %d, the code says %d", name, v, c)
		}
		delete(want, name)
	}
	for name := range want {
		t.Errorf("docs/layouts.md does not list %s", name)
	}
}
