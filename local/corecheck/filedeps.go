package corecheck

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// FileDeps maps each non-test file of the package in dir to the files of
// the same package whose package-level names (and methods) it uses.
func FileDeps(dir string) (map[string][]string, error) {
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	exports, err := exportData(dir)
	if err != nil {
		return nil, err
	}
	lookup := func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", lookup)}
	pkg, err := conf.Check(files[0].Name.Name, fset, files, info)
	if err != nil {
		return nil, fmt.Errorf("type-checking %s: %w", dir, err)
	}
	fileOf := func(p token.Pos) string { return filepath.Base(fset.Position(p).Filename) }
	deps := map[string][]string{}
	add := func(from token.Pos, obj types.Object) {
		if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
			return
		}
		if v, ok := obj.(*types.Var); ok && !v.IsField() && obj.Parent() != pkg.Scope() {
			return
		}
		if obj.Parent() != pkg.Scope() && !isMethodOrField(obj) {
			return
		}
		a, b := fileOf(from), fileOf(obj.Pos())
		if a != b && !slices.Contains(deps[a], b) {
			deps[a] = append(deps[a], b)
		}
	}
	for id, obj := range info.Uses {
		add(id.Pos(), obj)
	}
	for _, f := range files {
		name := fileOf(f.Pos())
		if _, ok := deps[name]; !ok {
			deps[name] = nil
		}
	}
	for _, d := range deps {
		slices.Sort(d)
	}
	return deps, nil
}

// exportData maps each package the package in dir depends on to the file
// of its export data (go list -export builds what it needs).
func exportData(dir string) (map[string]string, error) {
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}={{.Export}}", ".")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export in %s: %w", dir, err)
	}
	exports := map[string]string{}
	for line := range strings.Lines(string(out)) {
		if path, file, ok := strings.Cut(strings.TrimSpace(line), "="); ok && file != "" {
			exports[path] = file
		}
	}
	return exports, nil
}

func isMethodOrField(obj types.Object) bool {
	switch o := obj.(type) {
	case *types.Func:
		return o.Signature().Recv() != nil
	case *types.Var:
		return o.IsField()
	}
	return false
}

// Layers returns how many layers deps' files stand in (a file with no
// dependency is layer 1, any other one more than its deepest dependency)
// and the pairs of files that use each other, directly or around a cycle.
func Layers(deps map[string][]string) (int, [][2]string) {
	var cycles [][2]string
	for a, ds := range deps {
		for _, b := range ds {
			if a < b && reaches(deps, b, a) {
				cycles = append(cycles, [2]string{a, b})
			}
		}
	}
	slices.SortFunc(cycles, func(x, y [2]string) int { return strings.Compare(x[0]+x[1], y[0]+y[1]) })
	most := 0
	for _, d := range Depths(deps) {
		most = max(most, d)
	}
	return most, cycles
}

// Depths is the layer each of deps' files stands in (a cycle is cut where
// it closes).
func Depths(deps map[string][]string) map[string]int {
	depth := map[string]int{}
	var layer func(f string, seen map[string]bool) int
	layer = func(f string, seen map[string]bool) int {
		if d, ok := depth[f]; ok {
			return d
		}
		if seen[f] {
			return 0
		}
		seen[f] = true
		d := 1
		for _, g := range deps[f] {
			d = max(d, layer(g, seen)+1)
		}
		delete(seen, f)
		depth[f] = d
		return d
	}
	for f := range deps {
		layer(f, map[string]bool{})
	}
	return depth
}

func reaches(deps map[string][]string, from, to string) bool {
	seen := map[string]bool{}
	stack := []string{from}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if f == to {
			return true
		}
		if seen[f] {
			continue
		}
		seen[f] = true
		stack = append(stack, deps[f]...)
	}
	return false
}
