// Package corecheck measures the core a copier reads: the non-test Go
// files under lambda/ less the optional features' folders (those the lines
// marked "// feature: <name>" import), the files whose package clause is
// marked so (a feature's function) and lambda/internal's speed-ups.
package corecheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// featureFile is the package clause of a file that is all a feature's.
var featureFile = regexp.MustCompile(`(?m)^package \w+ // feature: `)

// featureImport is an import line that wires a feature in.
var featureImport = regexp.MustCompile(`"[^"]*/(lambda/[a-z0-9/]+)"\s*// feature: `)

// Files are the core's non-test Go files under root (the repository), as
// paths relative to it, sorted.
func Files(root string) ([]string, error) {
	features, err := featureFolders(root)
	if err != nil {
		return nil, err
	}
	var out []string
	err = filepath.WalkDir(filepath.Join(root, "lambda"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "lambda/internal" || slices.Contains(features, rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		if b, err := os.ReadFile(path); err != nil || featureFile.Match(b) {
			return err
		}
		out = append(out, rel)
		return nil
	})
	slices.Sort(out)
	return out, err
}

// featureFolders are the folders under lambda/ that the functions' mains
// import on lines marked as a feature's.
func featureFolders(root string) ([]string, error) {
	mains, err := filepath.Glob(filepath.Join(root, "lambda", "cmd", "*", "*.go"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range mains {
		b, err := os.ReadFile(m)
		if err != nil {
			return nil, err
		}
		for _, sub := range featureImport.FindAllSubmatch(b, -1) {
			out = append(out, string(sub[1]))
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Lines counts the lines of the files under root.
func Lines(root string, files []string) (int, error) {
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return 0, err
		}
		n += strings.Count(string(b), "\n")
	}
	return n, nil
}

// A Doc is a doc comment: where it is and how many lines it spans.
type Doc struct {
	Pos   token.Position
	Lines int
}

// Docs are the doc comments of files under root: of each file's package
// clause, declaration, spec and struct or interface field.
func Docs(root string, files []string) ([]Doc, error) {
	fset := token.NewFileSet()
	var out []Doc
	for _, f := range files {
		file, err := parser.ParseFile(fset, filepath.Join(root, f), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		add := func(g *ast.CommentGroup) {
			if g == nil {
				return
			}
			start, end := fset.Position(g.Pos()), fset.Position(g.End())
			start.Filename = f
			out = append(out, Doc{Pos: start, Lines: end.Line - start.Line + 1})
		}
		add(file.Doc)
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				add(n.Doc)
			case *ast.GenDecl:
				add(n.Doc)
			case *ast.TypeSpec:
				add(n.Doc)
			case *ast.ValueSpec:
				add(n.Doc)
			case *ast.Field:
				add(n.Doc)
			}
			return true
		})
	}
	return out, nil
}
