package trafikey_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// The bounds of the root package's API, so that a user learns it in an
// afternoon. Top-level names are the exported types, functions
// (constructors included), variables and constants; methods are counted per
// type. maxNamesWithMethods bounds the count with every exported method:
// a name added takes the place of one removed.
const (
	maxTopLevelNames    = 160
	maxMethodsPerType   = 25
	maxNamesWithMethods = 160
)

// TestAPISize fails when the root package exports more names than the
// bounds allow, reading the package's source as godoc does.
func TestAPISize(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/trafikey/trafikey")
	if err != nil {
		t.Fatal(err)
	}
	top, methods := len(p.Funcs), 0
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			top += len(v.Names)
		}
	}
	values(p.Consts)
	values(p.Vars)
	for _, typ := range p.Types {
		top++
		top += len(typ.Funcs)
		values(typ.Consts)
		values(typ.Vars)
		methods += len(typ.Methods)
		if len(typ.Methods) > maxMethodsPerType {
			t.Errorf("%s has %d methods, at most %d", typ.Name, len(typ.Methods), maxMethodsPerType)
		}
	}
	t.Logf("%d top-level names, %d methods, %d in all", top, methods, top+methods)
	if top > maxTopLevelNames {
		t.Errorf("%d exported top-level names, at most %d", top, maxTopLevelNames)
	}
	if top+methods > maxNamesWithMethods {
		t.Errorf("%d exported names with methods, at most %d", top+methods, maxNamesWithMethods)
	}
}
