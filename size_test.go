package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// Size limits of the code outside tests (docs/architecture.md, "House limits").
const (
	maxFileLines = 600
	maxFuncLines = 80 // from `func` to the closing brace
)

// longFunctions are the functions allowed over maxFuncLines, as
// "path/file.go Name", each with its reason in docs/architecture.md. None is.
var longFunctions = map[string]bool{}

// No file over maxFileLines lines and no function over maxFuncLines lines
// outside tests, but those docs/architecture.md names.
func TestSizeLimits(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		if n := fset.File(f.Pos()).LineCount(); n > maxFileLines {
			t.Errorf("%s: %d lines, over %d", path, n, maxFileLines)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			if n > maxFuncLines && !longFunctions[filepath.ToSlash(path)+" "+fn.Name.Name] {
				t.Errorf("%s: func %s is %d lines, over %d: split it, or name it in longFunctions and say why in docs/architecture.md", path, fn.Name.Name, n, maxFuncLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
