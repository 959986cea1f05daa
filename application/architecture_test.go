package application_test

import (
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/formward/formward"

// contextImports are the only imports of one application context by another, besides auth,
// which every context may import: the claim-and-dispatch loop that the engines and the account
// mail share, and the retention job, which purges what accounts and capture keep.
var contextImports = map[string][]string{
	"application/accounts":  {"application/dispatch"},
	"application/webhooks":  {"application/dispatch"},
	"application/workflows": {"application/dispatch"},
	"application/workspace": {"application/accounts", "application/capture"},
}

// The hexagon's rules hold for the core: domain imports only the standard library (and other
// domain packages); ports only the domain; the application only the domain, the ports,
// application/auth and, from its composition root (and the tests' harness, application/apptest),
// the contexts, besides the few imports between contexts listed above; ports/porttest, the
// ports' contracts, imports the ports. Go itself refuses import cycles.
func TestTheCoreImportsOnlyInwards(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, top := range []string{"domain", "ports", "application"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(dir string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			pkg, err := build.ImportDir(dir, 0)
			if _, none := err.(*build.NoGoError); none {
				return nil
			}
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, dir)
			rel = filepath.ToSlash(rel)
			for _, imp := range pkg.Imports {
				if reason := refused(rel, imp); reason != "" {
					t.Errorf("%s imports %s: %s", rel, imp, reason)
				}
			}
			checked++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 20 {
		t.Fatalf("checked only %d packages", checked)
	}
}

// refused says why pkg (a path in the module) may not import imp, or "" when it may.
func refused(pkg, imp string) string {
	if !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
		return "" // the standard library
	}
	own, ok := strings.CutPrefix(imp, module+"/")
	if !ok {
		return "the core uses no outside module"
	}
	inside := func(tops ...string) bool {
		for _, top := range tops {
			if own == top || strings.HasPrefix(own, top+"/") {
				return true
			}
		}
		return false
	}
	switch {
	case inside("domain") && strings.HasPrefix(pkg, "domain"):
		return ""
	case strings.HasPrefix(pkg, "domain"):
		return "domain imports only the standard library and the domain"
	case strings.HasPrefix(pkg, "ports"):
		if inside("domain") || pkg == "ports/porttest" && own == "ports" {
			return ""
		}
		return "ports import only the domain (their contracts, ports/porttest, the ports too)"
	case inside("domain", "ports") || own == "application/auth":
		return ""
	case (pkg == "application" || pkg == "application/apptest") && inside("application"):
		return "" // the composition root builds every context, and the tests' harness the root
	case inside("application") && slices.Contains(contextImports[pkg], own):
		return ""
	case inside("application"):
		return "a context imports another only where contextImports says so"
	}
	return "the core imports no adapter, bootstrap or test package"
}
