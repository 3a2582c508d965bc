package duty_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The repository stands alone: every file a comment or a doc names is in
// it, and nothing cites the design notes the project was planned from
// (they are not part of it; what a reader needs from them is in docs/).

// fileRef matches what reads as a file name in prose or code: a path of
// name characters ending in a source, doc or data extension.
var fileRef = regexp.MustCompile(`[A-Za-z0-9_.\-/]*[A-Za-z0-9_\-]\.(go|md|s|mod|yaml|yml|json|tsv|sh)\b`)

// outsideRefs are citations of material outside the repository.
var outsideRefs = regexp.MustCompile(`\bshared/|\bspec/|\bseeds/|\baeron-ipc\.md\b|\bBENCH\.md\b|\bSTYLE\.md\b`)

// repoFiles walks the repository's files that people read: Go sources,
// assembly, Markdown, the Makefile and the CI scripts.
func repoFiles(t *testing.T) (texts []string, all map[string]bool, base map[string]bool) {
	t.Helper()
	all, base = map[string]bool{}, map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") && d.Name() != ".ci" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			all[filepath.ToSlash(path)] = true
			return nil
		}
		all[filepath.ToSlash(path)] = true
		base[d.Name()] = true
		switch filepath.Ext(path) {
		case ".go", ".md", ".s":
			texts = append(texts, path)
		default:
			if d.Name() == "Makefile" || strings.HasPrefix(path, ".ci/") {
				texts = append(texts, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return texts, all, base
}

func TestRepositoryStandsAlone(t *testing.T) {
	texts, all, base := repoFiles(t)
	if len(texts) < 50 {
		t.Fatalf("found only %d files to check: not run from the repository's root?", len(texts))
	}
	for _, path := range texts {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		for n, line := range strings.Split(string(b), "\n") {
			if path == "refs_test.go" {
				break // names what it looks for
			}
			if m := outsideRefs.FindString(line); m != "" && !strings.Contains(line, "://") ||
				strings.Contains(line, "DESIGN.md") && !strings.HasPrefix(dir, "examples/trading") {
				if m == "" {
					m = "DESIGN.md" // the trading demo's own is in it; any other is the project's notes
				}
				t.Errorf("%s:%d cites %q, outside the repository: %s", path, n+1, m, strings.TrimSpace(line))
			}
			for _, loc := range fileRef.FindAllStringIndex(line, -1) {
				ref := line[loc[0]:loc[1]]
				if ignoredRef(line, loc[0], ref) {
					continue
				}
				if !refExists(ref, dir, all, base) {
					t.Errorf("%s:%d names %q, which is not in the repository", path, n+1, ref)
				}
			}
		}
	}
}

// ignoredRef reports whether a match is not a name of a repository file:
// part of a URL or an import path, an escape in a string literal, a
// suffix pattern, a Go selector that looks like an assembly file, an
// output file a command writes, or an absolute path in an example.
func ignoredRef(line string, at int, ref string) bool {
	before := line[:at]
	switch {
	case strings.Contains(ref, "://"), strings.HasSuffix(before, "://"),
		strings.Contains(before, "http"), strings.Contains(ref, "github.com"), strings.Contains(ref, "golang.org"):
		return true
	case strings.HasSuffix(ref, ".s") && !strings.Contains(ref, "_"):
		return true // a selector; assembly files carry their architecture after an underscore
	case strings.HasSuffix(ref, ".json"), strings.HasSuffix(ref, ".tsv"), strings.HasSuffix(ref, ".yaml"), strings.HasSuffix(ref, ".yml"):
		return true // output files a command writes
	case strings.HasSuffix(before, `\`), strings.HasPrefix(ref, "_"):
		return true // "\t/src/main.go" in a literal stack; "*_test.go"
	case strings.HasPrefix(ref, "/"), strings.HasPrefix(ref, "../"):
		return true // absolute paths are examples of where a file goes
	}
	return false
}

// refExists resolves a named file the way a reader would: from the
// repository's root, from the naming file's directory and its parents,
// or, for a bare name, anywhere in the repository.
func refExists(ref, dir string, all, base map[string]bool) bool {
	ref = strings.TrimPrefix(strings.TrimSuffix(ref, "."), "./")
	if !strings.Contains(ref, "/") {
		return base[ref]
	}
	for d := dir; ; d = filepath.ToSlash(filepath.Dir(d)) {
		p := ref
		if d != "." {
			p = d + "/" + ref
		}
		if all[filepath.ToSlash(filepath.Clean(p))] {
			return true
		}
		if d == "." {
			break
		}
	}
	return false
}

// sectionRef matches a citation of a section of a page in docs/:
// docs/page.md, "Heading" or docs/page.md ("Heading").
var sectionRef = regexp.MustCompile(`(docs/[a-z0-9_-]+\.md)[,;]?(?:\s|//)*\(?"((?:[^"\n]|\n\s*//)+)"`)

// TestCitedSectionsExist: a comment or a page that sends the reader to a
// section of docs/ names a heading that page has, so that a section that
// is renamed or removed takes its citations with it.
func TestCitedSectionsExist(t *testing.T) {
	texts, _, _ := repoFiles(t)
	headings := map[string][]string{}
	n := 0
	for _, path := range texts {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if path == "refs_test.go" {
			continue
		}
		text := string(b)
		for _, loc := range sectionRef.FindAllStringSubmatchIndex(text, -1) {
			page := text[loc[2]:loc[3]]
			// A section's name may run on to the next comment line.
			section := strings.Join(strings.Fields(strings.ReplaceAll(text[loc[4]:loc[5]], "//", "")), " ")
			hs, ok := headings[page]
			if !ok {
				hs = pageHeadings(t, page)
				headings[page] = hs
			}
			n++
			if !hasHeading(hs, section) {
				line := 1 + strings.Count(text[:loc[0]], "\n")
				t.Errorf("%s:%d cites %s, %q: the page has no such heading", path, line, page, section)
			}
		}
	}
	if n < 20 {
		t.Fatalf("found only %d section citations: the pattern no longer matches how they are written?", n)
	}
}

// pageHeadings returns a page's Markdown headings, without their marks;
// a page that does not exist has none (TestRepositoryStandsAlone reports
// the page itself).
func pageHeadings(t *testing.T, page string) []string {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		return nil
	}
	var hs []string
	fence := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
		}
		if !fence && strings.HasPrefix(line, "#") {
			hs = append(hs, strings.TrimSpace(strings.TrimLeft(line, "#")))
		}
	}
	return hs
}

// hasHeading reports whether a citation names a heading: the heading
// itself, case aside, or its start up to a colon or a parenthesis (a
// citation may shorten "Liveness: torn messages" to "Liveness").
func hasHeading(hs []string, section string) bool {
	for _, h := range hs {
		if strings.EqualFold(h, section) {
			return true
		}
		if len(h) > len(section) && strings.EqualFold(h[:len(section)], section) && strings.ContainsRune(":( ", rune(h[len(section)])) {
			return true
		}
	}
	return false
}

// TestCodegenTestsAreListed: the tests built only with -tags
// duty_codegen run only where the Makefile's codegen target names them,
// so each one must be named there.
func TestCodegenTestsAreListed(t *testing.T) {
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^CODEGEN_TESTS\s*:=\s*(.+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("Makefile has no CODEGEN_TESTS")
	}
	listed := map[string]bool{}
	for _, name := range strings.Split(string(m[1]), "|") {
		listed[strings.TrimSpace(name)] = true
	}
	texts, _, _ := repoFiles(t)
	testFunc := regexp.MustCompile(`(?m)^func (Test[A-Za-z0-9_]*)\(`)
	found := 0
	for _, path := range texts {
		if !strings.HasSuffix(path, "_test.go") {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`(?m)^//go:build .*\bduty_codegen\b`).Match(b) {
			continue
		}
		for _, f := range testFunc.FindAllSubmatch(b, -1) {
			found++
			if !listed[string(f[1])] {
				t.Errorf("%s: %s builds only with duty_codegen but is not in the Makefile's CODEGEN_TESTS, so nothing runs it", path, f[1])
			}
		}
	}
	if found == 0 {
		t.Fatal("found no duty_codegen tests")
	}
}

// TestExamplesImportOnlyWhatUsersCan: an example copied into a user's
// module must compile, so it imports no internal package of duty (its
// own internal packages, copied with it, are fine).
func TestExamplesImportOnlyWhatUsersCan(t *testing.T) {
	const module = "github.com/dutyrt/duty/"
	n := 0
	err := filepath.WalkDir("examples", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		parts := strings.SplitN(filepath.ToSlash(path), "/", 3) // examples/<name>/...
		own := module + "examples/" + parts[1] + "/"
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			n++
			if strings.HasPrefix(p, module) && strings.Contains(p+"/", "/internal/") && !strings.HasPrefix(p, own) {
				t.Errorf("%s imports %s, which a user's module cannot", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no imports found under examples/")
	}
}

// TestOnlyDutyfxLinksFx: fx, dig and zap are linked only into programs
// that import dutyfx; every other library package works without them.
func TestOnlyDutyfxLinksFx(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}",
		"./agent/...", "./broadcast", "./idle", "./ipc/...", "./mailbox/...", "./message", "./ringbuf", "./runner").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("go list found only %d packages", len(deps))
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "go.uber.org/fx") || strings.HasPrefix(d, "go.uber.org/dig") || strings.HasPrefix(d, "go.uber.org/zap") {
			t.Errorf("a library package links %s", d)
		}
	}
}

// TestTutorialIsTheCode: every Go block of docs/tutorial.md is a region
// of examples/tutorial/tutorial.go, which compiles and whose tests run,
// so the tutorial's code cannot rot.
func TestTutorialIsTheCode(t *testing.T) {
	doc, err := os.ReadFile("docs/tutorial.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("examples/tutorial/tutorial.go")
	if err != nil {
		t.Fatal(err)
	}
	regions := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?s)// tutorial:begin \w+\n(.*?)\n// tutorial:end`).FindAllSubmatch(src, -1) {
		regions[strings.TrimSpace(string(m[1]))] = true
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllSubmatch(doc, -1)
	if len(blocks) < 5 || len(regions) < 5 {
		t.Fatalf("%d blocks, %d regions: the markers changed?", len(blocks), len(regions))
	}
	for i, b := range blocks {
		if !regions[strings.TrimSpace(string(b[1]))] {
			t.Errorf("docs/tutorial.md's Go block %d is not a region of examples/tutorial/tutorial.go:\n%s", i+1, b[1])
		}
	}
}
