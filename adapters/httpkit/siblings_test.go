package httpkit_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// siblings are the HTTP adapters that share adapters/httpkit (and adapters/httperr) instead of
// importing one another.
var siblings = []string{"http", "web", "dashboard"}

const adapters = "github.com/formward/formward/adapters/"

// The API, the public pages and the dashboard never import one another (nor one another's
// sub-packages): what they share lives in httpkit. Only the packages' own code counts; a
// black-box test may start two of them together.
func TestSiblingAdaptersDoNotImportEachOther(t *testing.T) {
	for _, pkg := range siblings {
		dir := filepath.Join("..", pkg)
		imports := packageImports(t, dir)
		if len(imports) == 0 {
			t.Fatalf("%s: no imports read; is the test looking in the right place?", dir)
		}
		for imp, file := range imports {
			for _, other := range siblings {
				if other == pkg {
					continue
				}
				if imp == adapters+other || strings.HasPrefix(imp, adapters+other+"/") {
					t.Errorf("adapters/%s imports %s (%s): put what they share in adapters/httpkit", pkg, imp, file)
				}
			}
		}
	}
	for imp, file := range packageImports(t, ".") {
		for _, other := range siblings {
			if imp == adapters+other || strings.HasPrefix(imp, adapters+other+"/") {
				t.Errorf("adapters/httpkit imports %s (%s): the kit must not depend on the adapters that use it", imp, file)
			}
		}
	}
}

// packageImports reads the import paths of the non-test Go files of dir and its
// sub-directories, each with one file that imports it.
func packageImports(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != dir {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, s := range f.Imports {
			imp, err := strconv.Unquote(s.Path.Value)
			if err != nil {
				return err
			}
			out[imp] = p
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
