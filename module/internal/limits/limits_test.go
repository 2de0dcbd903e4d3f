package limits

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

type size struct{ lines, complexity int }

// TestFunctionSize measures every function of the module's Go code but its
// tests: lines from func to the closing brace, and cyclomatic complexity as
// gocyclo counts it (1, plus one per if, for, range, non-default case and
// select case, && and ||, function literals included in their function).
func TestFunctionSize(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	n := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			n++
			name := filepath.ToSlash(filepath.Join("module", rel)) + ":" + funcName(fn)
			got := size{
				lines:      fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1,
				complexity: complexity(fn),
			}
			if got.lines > MaxLines || got.complexity > MaxComplexity {
				t.Errorf("%s: %d lines, complexity %d; the bounds are %d and %d", name, got.lines, got.complexity, MaxLines, MaxComplexity)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("measured %d functions: the walk no longer finds the module", n)
	}
}

// funcName is a function's name, with its receiver's type for a method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	switch x := typ.(type) {
	case *ast.IndexExpr:
		typ = x.X
	case *ast.IndexListExpr:
		typ = x.X
	}
	return fmt.Sprintf("(%s).%s", typ.(*ast.Ident).Name, fn.Name.Name)
}

// complexity is fn's cyclomatic complexity as gocyclo counts it.
func complexity(fn *ast.FuncDecl) int {
	c := 1
	ast.Inspect(fn, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			c++
		case *ast.CaseClause:
			if n.List != nil {
				c++
			}
		case *ast.CommClause:
			if n.Comm != nil {
				c++
			}
		case *ast.BinaryExpr:
			if n.Op == token.LAND || n.Op == token.LOR {
				c++
			}
		}
		return true
	})
	return c
}
