// Package docs_test keeps the README and the documents in docs/ true to the
// repository: every relative link and anchor resolves, every make target
// they name exists, and every repository path they name is there.
package docs_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// topLevel are the names a repository path in the docs starts with.
var topLevel = []string{"lambda/", "local/", "infra/", "schema/", "events/", "appsyncjs/", "docs/", ".ci/"}

var (
	linkRe    = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	codeRe    = regexp.MustCompile("`([^`\n]+)`")
	makeRe    = regexp.MustCompile(`\bmake (?:-s )?([a-z][a-z-]*)`)
	targetRe  = regexp.MustCompile(`(?m)^([a-z][a-z-]*):`)
	headingRe = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	identRe   = regexp.MustCompile(`^(.*/[a-z0-9]+)\.[A-Z][A-Za-z0-9.]*$`)
)

// problems returns what does not resolve in the Markdown files (paths
// relative to root).
func problems(root string, files []string) []string {
	var out []string
	makefile, _ := os.ReadFile(filepath.Join(root, "Makefile"))
	targets := map[string]bool{}
	for _, m := range targetRe.FindAllStringSubmatch(string(makefile), -1) {
		targets[m[1]] = true
	}
	for _, file := range files {
		raw, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			out = append(out, err.Error())
			continue
		}
		text := string(raw)
		for _, m := range linkRe.FindAllStringSubmatch(text, -1) {
			if p := checkLink(root, file, m[1]); p != "" {
				out = append(out, p)
			}
		}
		code := strings.Join(codeRe.FindAllString(text, -1), "\n")
		for i, piece := range strings.Split(text, "```") {
			if i%2 == 1 { // inside a code block
				code += "\n" + piece
			}
		}
		for _, m := range makeRe.FindAllStringSubmatch(code, -1) {
			if !targets[m[1]] {
				out = append(out, fmt.Sprintf("%s: make %s: no such target in the Makefile", file, m[1]))
			}
		}
		for _, m := range codeRe.FindAllStringSubmatch(text, -1) {
			for _, word := range strings.Fields(m[1]) {
				if p := checkPath(root, word); p != "" {
					out = append(out, file+": "+p)
				}
			}
		}
	}
	return out
}

// checkLink checks a link of file: a relative path that exists and, with
// an anchor, a heading of the file it names.
func checkLink(root, file, target string) string {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return ""
	}
	path, anchor, _ := strings.Cut(target, "#")
	dest := file
	if path != "" {
		dest = filepath.Join(filepath.Dir(file), path)
		if _, err := os.Stat(filepath.Join(root, dest)); err != nil {
			return fmt.Sprintf("%s: link %s: %s does not exist", file, target, dest)
		}
	}
	if anchor == "" || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	raw, err := os.ReadFile(filepath.Join(root, dest))
	if err != nil {
		return fmt.Sprintf("%s: link %s: %v", file, target, err)
	}
	var anchors []string
	for _, m := range headingRe.FindAllStringSubmatch(string(raw), -1) {
		anchors = append(anchors, slug(m[1]))
	}
	if !slices.Contains(anchors, anchor) {
		return fmt.Sprintf("%s: link %s: %s has no heading #%s", file, target, dest, anchor)
	}
	return ""
}

// slug is the anchor GitHub gives a heading: lower case, punctuation
// dropped but for hyphens, spaces as hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// checkPath checks a word of inline code that names a repository path
// (lambda/store/keys.go, local/executor): the part before any placeholder
// (<name>) or wildcard must exist.
func checkPath(root, word string) string {
	word = strings.Trim(word, ".,;:()'\"")
	if !slices.ContainsFunc(topLevel, func(dir string) bool { return strings.HasPrefix(word, dir) }) {
		return ""
	}
	if i := strings.IndexAny(word, "<*{$"); i >= 0 {
		word = word[:strings.LastIndex(word[:i], "/")+1]
	}
	if i := strings.Index(word, ":"); i >= 0 { // file:line
		word = word[:i]
	}
	if m := identRe.FindStringSubmatch(word); m != nil { // lambda/store.Schema: the package
		word = m[1]
	}
	if _, err := os.Stat(filepath.Join(root, word)); err != nil {
		return fmt.Sprintf("path %s does not exist", word)
	}
	return ""
}

func TestDocsResolve(t *testing.T) {
	files := []string{"README.md"}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".md") {
			files = append(files, "docs/"+e.Name())
		}
	}
	if len(files) < 5 {
		t.Fatalf("docs: %v", files)
	}
	for _, p := range problems("..", files) {
		t.Error(p)
	}
}

// The checker finds each kind of break: a missing file, a missing anchor, a
// make target that is not there, a path that is not there.
func TestDocsCheckerFindsBreaks(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "Makefile"), []byte("test: vet\nvet:\n"), 0o644)
	os.MkdirAll(filepath.Join(root, "docs"), 0o755)
	os.WriteFile(filepath.Join(root, "docs", "a.md"), []byte("# A\n\n## Some heading\n"), 0o644)
	os.WriteFile(filepath.Join(root, "README.md"), []byte("# R\n\n[ok](docs/a.md#some-heading) [gone](docs/b.md)\n"+
		"[no anchor](docs/a.md#other) `make test` `make bench` `docs/a.md` `lambda/nowhere.go`\n"), 0o644)
	got := problems(root, []string{"README.md", "docs/a.md"})
	want := []string{
		"README.md: link docs/b.md: docs/b.md does not exist",
		"README.md: link docs/a.md#other: docs/a.md has no heading #other",
		"README.md: make bench: no such target in the Makefile",
		"README.md: path lambda/nowhere.go does not exist",
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The store's section of layout.md (its diagram and the paragraph after it)
// names every file of lambda/store, and no file that is not there.
func TestLayoutNamesEveryStoreFile(t *testing.T) {
	layout, err := os.ReadFile("layout.md")
	if err != nil {
		t.Fatal(err)
	}
	start := bytes.Index(layout, []byte("## The store, a file an idea"))
	end := bytes.Index(layout, []byte("## Every folder"))
	if start < 0 || end < start {
		t.Fatal("layout.md has no store section before its table of paths")
	}
	section := string(layout[start:end])
	files, err := filepath.Glob("../lambda/store/*.go")
	if err != nil {
		t.Fatal(err)
	}
	exists := map[string]bool{}
	for _, f := range files {
		if name := filepath.Base(f); !strings.HasSuffix(name, "_test.go") {
			exists[name] = true
			if !strings.Contains(section, name) {
				t.Errorf("layout.md's store section does not name %s", name)
			}
		}
	}
	for _, m := range regexp.MustCompile(`[a-z]+\.go\b`).FindAllString(section, -1) {
		if !exists[m] {
			t.Errorf("layout.md's store section names %s, which lambda/store does not hold", m)
		}
	}
}

// firstScreen is how many lines a reader sees of a document before scrolling.
const firstScreen = 60

// The README and layout.md lead with the core: within their first screen, the
// pattern's five ideas, numbered, each linking the files it lives in; both
// name the same files, and the optional features come after them.
func TestBothLeadWithTheCore(t *testing.T) {
	var named [][]string
	for _, doc := range []string{"../README.md", "layout.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		ideas := strings.Index(text, "the pattern in five ideas")
		if ideas < 0 {
			ideas = strings.Index(text, "The pattern in five ideas")
		}
		features := strings.Index(text, "Optional features")
		if features < 0 {
			features = strings.Index(text, "## The optional features")
		}
		if ideas < 0 || features < ideas {
			t.Errorf("%s: no five ideas of the pattern before its optional features", doc)
			continue
		}
		if line := strings.Count(text[:ideas], "\n") + 1; line > firstScreen/2 {
			t.Errorf("%s: the five ideas start on line %d, past the first screen's first half", doc, line)
		}
		section := text[ideas:features]
		var files []string
		for i := 1; i <= 5; i++ {
			start := strings.Index(section, fmt.Sprintf("\n%d. **", i))
			if start < 0 {
				t.Errorf("%s: idea %d is not there", doc, i)
				continue
			}
			item := section[start+1:]
			if end := strings.Index(item, fmt.Sprintf("\n%d. **", i+1)); end >= 0 {
				item = item[:end]
			} else if end := strings.Index(item, "\n\n"); end >= 0 {
				item = item[:end]
			}
			links := regexp.MustCompile(`\]\((?:\.\./)?((?:lambda|appsyncjs)/[^)#]+)\)`).FindAllStringSubmatch(item, -1)
			if len(links) == 0 {
				t.Errorf("%s: idea %d links no file", doc, i)
			}
			for _, l := range links {
				files = append(files, l[1])
			}
		}
		if start := strings.Count(text[:ideas], "\n") + 1; start+strings.Count(section, "\n") > firstScreen {
			t.Logf("%s: the five ideas end past line %d", doc, firstScreen)
		}
		slices.Sort(files)
		named = append(named, slices.Compact(files))
	}
	if len(named) == 2 && !slices.Equal(named[0], named[1]) {
		t.Errorf("the README's five ideas name %v, layout.md's %v: the same files, please", named[0], named[1])
	}
}

// readmeBudget is the most characters the README holds: the two commands,
// the five ideas, the first query, the headline figures and where to read
// on. What does not fit goes to docs/.
const readmeBudget = 8000

func TestTheREADMEFitsItsBudget(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCount(b); n > readmeBudget {
		t.Errorf("README.md holds %d characters, past its %d: move the detail to docs/", n, readmeBudget)
	}
}

// docsBudget is the most characters docs/*.md hold together (160,000, the
// issue's aim). It only comes down (a figure belongs in the table a command writes,
// a derivation in one place).
const docsBudget = 160000

func TestTheDocsFitTheirBudget(t *testing.T) {
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n += utf8.RuneCount(b)
	}
	t.Logf("docs/*.md: %d characters in %d files", n, len(files))
	if n > docsBudget {
		t.Errorf("docs/*.md hold %d characters, past their %d: say it once, shorter", n, docsBudget)
	}
}
