package otlpwire

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestTagsAreOneByte holds appendTag to its promise: every field number
// the package declares, in each const block whose comment begins "Field
// numbers", is below 16, so that its tag is one byte.
func TestTagsAreOneByte(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST || g.Doc == nil || !strings.HasPrefix(g.Doc.Text(), "Field numbers") {
				continue
			}
			for _, s := range g.Specs {
				v := s.(*ast.ValueSpec)
				lit, ok := v.Values[0].(*ast.BasicLit)
				if !ok {
					t.Errorf("%s: %s is not a literal", fset.Position(v.Pos()), v.Names[0])
					continue
				}
				n, _ := strconv.Atoi(lit.Value)
				if n <= 0 || n >= 16 {
					t.Errorf("%s: field %s = %d: appendTag writes one byte, for 1 to 15", fset.Position(v.Pos()), v.Names[0], n)
				}
				seen++
			}
		}
	}
	if seen < 30 {
		t.Errorf("found %d field numbers; the blocks' comments changed?", seen)
	}
}
