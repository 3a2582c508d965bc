package duty_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
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
