package layoutdoc

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// row is a table row of docs/layouts.md: | `pkg.Name` | value | meaning |.
var row = regexp.MustCompile("(?m)^\\| `([a-z]+\\.[A-Za-z]+)` \\| (-?[0-9]+) \\|")

// Rows returns every constant docs/layouts.md lists, by name
// ("ringbuf.HeaderLength"), with its value on the page. It finds the page
// from the calling test's directory, walking up to the module root.
func Rows(t testing.TB) map[string]int64 {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("layoutdoc: no go.mod above the test's directory")
		}
		dir = parent
	}
	page, err := os.ReadFile(filepath.Join(dir, "docs", "layouts.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int64{}
	for _, m := range row.FindAllStringSubmatch(string(page), -1) {
		v, err := strconv.ParseInt(m[2], 10, 64)
		if err != nil {
			t.Fatalf("docs/layouts.md: %s: %v", m[1], err)
		}
		rows[m[1]] = v
	}
	return rows
}

// Check fails t unless docs/layouts.md lists exactly the constants of
// package pkg that code holds (names without the package prefix), with
// their values: a package's own test calls it, so that unexported layout
// constants are checked as well as exported ones.
func Check(t testing.TB, pkg string, code map[string]int64) {
	t.Helper()
	rows := Rows(t)
	for name, v := range rows {
		short, ok := strings.CutPrefix(name, pkg+".")
		if !ok {
			continue
		}
		want, known := code[short]
		if !known {
			t.Errorf("docs/layouts.md lists %s, which the package's layout test does not know", name)
			continue
		}
		if v != want {
			t.Errorf("docs/layouts.md: %s is %d, the code says %d", name, v, want)
		}
	}
	for short := range code {
		if _, ok := rows[pkg+"."+short]; !ok {
			t.Errorf("docs/layouts.md does not list %s.%s", pkg, short)
		}
	}
}
