package corecheck

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// docLines is the most lines a doc comment of the core takes: it states a
// contract; derivations and measurements go to docs/.
const docLines = 4

// coreLines is the most lines the core's files hold. It only comes down:
// lower it when the core shrinks (the aim is 7,000).
const coreLines = 8619

func TestDocCommentsStateContracts(t *testing.T) {
	files := coreFiles(t)
	docs, err := Docs("../..", files)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if d.Lines > docLines {
			t.Errorf("%s: a doc comment of %d lines, past %d: state the contract, move the rest to docs/", d.Pos, d.Lines, docLines)
		}
	}
}

func TestTheCoreFitsItsBudget(t *testing.T) {
	files := coreFiles(t)
	n, err := Lines("../..", files)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the core: %d lines in %d files", n, len(files))
	if n > coreLines {
		t.Errorf("the core holds %d lines, past its %d: a feature goes in a folder, tooling in local/, a speed-up in lambda/internal", n, coreLines)
	}
}

// The core leaves out exactly the folders the mains wire in as features,
// and lambda/internal.
func TestTheCoreIsLambdaLessFeaturesAndSpeedUps(t *testing.T) {
	features, err := featureFolders("../..")
	if err != nil {
		t.Fatal(err)
	}
	if len(features) == 0 {
		t.Fatal("no line of lambda/cmd wires a feature in")
	}
	for _, f := range features {
		if entries, err := os.ReadDir("../../" + f); err != nil || len(entries) == 0 {
			t.Errorf("feature folder %s: %v", f, err)
		}
	}
	files := coreFiles(t)
	for _, f := range files {
		dir := filepath.Dir(f)
		if slices.Contains(features, dir) || dir == "lambda/internal" || filepath.Dir(dir) == "lambda/internal" {
			t.Errorf("%s is in the core", f)
		}
	}
	if slices.Contains(files, "lambda/cmd/probe/main.go") {
		t.Error("lambda/cmd/probe/main.go, whose package clause is the probe's, is in the core")
	}
	if _, err := os.Stat("../../lambda/resolver/handler.go"); err != nil || !slices.Contains(files, "lambda/resolver/handler.go") {
		t.Errorf("lambda/resolver/handler.go is not in the core (%v)", err)
	}
}

// A doc comment is measured whole, and a field's counts.
func TestDocsMeasuresEachDocComment(t *testing.T) {
	dir := t.TempDir()
	src := "// Package p is\n// two lines.\npackage p\n\n// T is\n// a\n// type\n// of five\n// lines.\ntype T struct {\n\t// F is\n\t// one.\n\tF int\n}\n\n// f has one.\nfunc f() {}\n"
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	docs, err := Docs(dir, []string{"p.go"})
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, d := range docs {
		got = append(got, d.Lines)
	}
	if want := []int{2, 5, 2, 1}; !slices.Equal(got, want) {
		t.Errorf("doc comment lengths %v, want %v", got, want)
	}
}

// fileLayers is the most layers the files of a core package stand in: a
// reader walks a package from the file that uses no other up.
const fileLayers = 6

// The files of lambda/resolver stand in at most fileLayers layers, and no
// two use each other's names, directly or around a cycle.
func TestResolverFilesStandInLayers(t *testing.T) {
	deps, layers := fileLayersOf(t, "lambda/resolver")
	if layers > fileLayers {
		t.Errorf("lambda/resolver's files stand in %d layers, past %d", layers, fileLayers)
	}
	t.Logf("lambda/resolver: %d files in %d layers", len(deps), layers)
}

// The files of lambda/store stand in the layers docs/layout.md lists, read
// from the first, and no two use each other's names.
func TestStoreFilesStandInLayers(t *testing.T) {
	deps, _ := fileLayersOf(t, "lambda/store")
	listed := storeLayers(t)
	for f, d := range Depths(deps) {
		if listed[f] != d {
			t.Errorf("lambda/store/%s stands in layer %d; docs/layout.md lists it in %d", f, d, listed[f])
		}
	}
	for f := range listed {
		if _, ok := deps[f]; !ok {
			t.Errorf("docs/layout.md lists %s among the store's layers; lambda/store holds no such file", f)
		}
	}
}

// fileLayersOf are the file dependencies of the package in dir and the
// layers its files stand in, failing t for each two files that use each
// other's names.
func fileLayersOf(t *testing.T, dir string) (map[string][]string, int) {
	t.Helper()
	deps, err := FileDeps("../../" + dir)
	if err != nil {
		t.Fatal(err)
	}
	layers, cycles := Layers(deps)
	for _, c := range cycles {
		t.Errorf("%s: %s and %s use each other's names: move what both need to a file below them (types.go, store.go)", dir, c[0], c[1])
	}
	return deps, layers
}

// storeLayers are the store's files by the layer docs/layout.md's store
// section lists each in ("1. `keys.go` (...), `client.go` ...").
func storeLayers(t *testing.T) map[string]int {
	t.Helper()
	layout, err := os.ReadFile("../../docs/layout.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(layout), "## The store, a file an idea")
	section, _, _ = strings.Cut(section, "\n## ")
	listed := map[string]int{}
	for line := range strings.Lines(section) {
		m := layerLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		for _, f := range fileName.FindAllStringSubmatch(line, -1) {
			listed[f[1]] = n
		}
	}
	if len(listed) == 0 {
		t.Fatal("docs/layout.md's store section lists no layer of files")
	}
	return listed
}

var (
	layerLine = regexp.MustCompile(`^(\d+)\. `)
	fileName  = regexp.MustCompile("`([a-z]+\\.go)`")
)

// Layers counts the longest chain of files and finds each pair around a
// cycle.
func TestLayersFindsChainsAndCycles(t *testing.T) {
	deps := map[string][]string{"a": {"b"}, "b": {"c"}, "c": nil, "d": {"e"}, "e": {"f"}, "f": {"d"}}
	layers, cycles := Layers(deps)
	if layers != 3 {
		t.Errorf("layers %d, want 3", layers)
	}
	want := [][2]string{{"d", "e"}, {"e", "f"}}
	if !slices.Equal(cycles, want) {
		t.Errorf("cycles %v, want %v", cycles, want)
	}
}

// coreFiles are the core's files, failing the test when they cannot be
// listed.
func coreFiles(t *testing.T) []string {
	t.Helper()
	files, err := Files("../..")
	if err != nil {
		t.Fatal(err)
	}
	return files
}
