package main

import (
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// listedPackage is what `go list -json` says of one package's imports.
type listedPackage struct {
	ImportPath   string
	Dir          string
	GoFiles      []string
	TestGoFiles  []string
	XTestGoFiles []string
	Imports      []string
	TestImports  []string // of its _test.go files in the package
	XTestImports []string // of its package_test files
	Deps         []string
}

// listPackages runs `go list -json` over patterns.
func listPackages(t *testing.T, args ...string) []listedPackage {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-json"}, args...)...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return pkgs
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
}

// under reports whether path is the package root or one below it.
func under(path, root string) bool { return path == root || strings.HasPrefix(path, root+"/") }

// executors are the backends' implementations: only the Engine chooses
// among them.
var executors = []string{"countwall/planner/sqlite", "countwall/planner/postgres", "countwall/planner/snapshot", "countwall/planner/grouped"}

// parentImports are the packages that import their parent today: the wire,
// the servers and the risk monitor are front doors on the Engine (DESIGN.md
// section 1), the attack programs' runner, report, audit, demo and bench
// drive the attack registry, and the bounds bench asks the firewall through
// the attacks' Querier. Anything new that imports its parent fails the test.
var parentImports = []string{
	"countwall/attacks/audit", "countwall/attacks/bench", "countwall/attacks/bounding", "countwall/attacks/demo",
	"countwall/attacks/experiments", "countwall/attacks/report", "countwall/attacks/runner",
	"countwall/proxy/monitor", "countwall/proxy/pgwire", "countwall/proxy/server",
}

// TestImportFacts holds the layering DESIGN.md section 1 states, for every
// package of the module and its tests:
//   - no package imports the executors but the Engine (proxy); of tests,
//     only the executors' own, the planner's (which runs every backend on one
//     corpus), the Engine's and those under internal/ (the attacks' model),
//     and the snapshot's of SQLite, its fallback, which they hold it to;
//   - mechanisms and config depend on the vocabulary, never on a parser, a
//     database driver or an executor;
//   - nothing under attacks/, tests included, imports the planner or the
//     mechanisms: attacks speak SQL only;
//   - no package imports its parent, but those of parentImports.
func TestImportFacts(t *testing.T) {
	pkgs := listPackages(t, "./...")
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages; the module has more", len(pkgs))
	}
	for _, p := range pkgs {
		all := slices.Concat(p.Imports, p.TestImports, p.XTestImports)
		slices.Sort(all)
		for _, imp := range slices.Compact(all) {
			inTests := !slices.Contains(p.Imports, imp)
			for _, ex := range executors {
				if imp != ex || p.ImportPath == "countwall/proxy" || under(p.ImportPath, ex) {
					continue
				}
				if inTests && (p.ImportPath == "countwall/planner" || under(p.ImportPath, "countwall/internal")) {
					continue
				}
				if inTests && p.ImportPath == "countwall/planner/snapshot" && imp == "countwall/planner/sqlite" {
					continue
				}
				t.Errorf("%s imports the executor %s (tests only: %v); only the Engine chooses a backend", p.ImportPath, imp, inTests)
			}
			if under(p.ImportPath, "countwall/attacks") && (under(imp, "countwall/planner") || under(imp, "countwall/mechanisms")) {
				t.Errorf("%s imports %s (tests only: %v); attacks speak SQL only", p.ImportPath, imp, inTests)
			}
			if parent := p.ImportPath[:max(strings.LastIndex(p.ImportPath, "/"), 0)]; parent != "" && imp == parent && !slices.Contains(parentImports, p.ImportPath) {
				t.Errorf("%s imports its parent %s", p.ImportPath, imp)
			}
		}
	}
	for _, root := range []string{"countwall/mechanisms", "countwall/config"} {
		deps := listPackages(t, "-deps", root)
		for _, d := range deps {
			switch {
			case under(d.ImportPath, "modernc.org/sqlite"), under(d.ImportPath, "github.com/xwb1989/sqlparser"),
				under(d.ImportPath, "github.com/jackc/pgx/v5"), under(d.ImportPath, "countwall/planner"),
				under(d.ImportPath, "countwall/proxy"), under(d.ImportPath, "countwall/pglex"):
				t.Errorf("%s depends on %s; it may use the vocabulary (countwall/ir) only", root, d.ImportPath)
			}
		}
	}
}

// TestStateKeepsNoNoise: the state database keeps the ledger's arithmetic
// (the accounting kinds and the zCDP conversion, in ir) without the noise:
// neither the mechanisms nor the DP library is among proxy/state's
// dependencies.
func TestStateKeepsNoNoise(t *testing.T) {
	for _, d := range listPackages(t, "-deps", "countwall/proxy/state") {
		if under(d.ImportPath, "github.com/google/differential-privacy") || under(d.ImportPath, "countwall/mechanisms") {
			t.Errorf("countwall/proxy/state depends on %s; the ledger's arithmetic is in countwall/ir", d.ImportPath)
		}
	}
}

// TestRootHoldsMainOnly: the module's root shows the house, so its one
// non-test file is main.go and the commands live in internal/cli.
func TestRootHoldsMainOnly(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() && strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") && name != "main.go" {
			t.Errorf("%s is at the root; the root holds main.go and tests, the commands live in internal/cli", name)
		}
	}
}

// sqlReaders are the packages that read SQL text, each with why: SQL is
// read once, by the parser, and everything after it reads the ir.Query
// (DESIGN.md section 1). A package that only writes SQL may quote names
// with pglex (pglexWriters); no other reads a statement's text.
var sqlReaders = map[string]string{
	"countwall/pglex":         "the lexer itself, by PostgreSQL's rules",
	"countwall/planner":       "the parser: a statement's tokens to the validated ir.Query (and the only user of xwb1989/sqlparser)",
	"countwall/proxy":         "the Engine's Prepare: it decides what a statement is from the tokens the planner lexed once, and keeps its audit shape from them",
	"countwall/proxy/catalog": "the catalog's translation of schema-discovery statements, which the COUNT language does not cover",
}

// pglexWriters are what pglex offers a package that writes SQL: quoting a
// name as PostgreSQL reads it back (release's conjunct texts, sqlgen's
// SQLite statements, the datasets' and attacks' SQL, the config starter).
var pglexWriters = []string{"QuoteIdent", "QuoteIdentAlways", "NeedsQuoting", "IsReserved", "ReservedWords"}

// TestNothingElseReadsSQL: outside sqlReaders no file, tests included,
// imports xwb1989/sqlparser or uses pglex but to quote a name. The
// parser's own reading lives in planner alone; sqlparser in planner only.
func TestNothingElseReadsSQL(t *testing.T) {
	const lexer, parserPkg = "countwall/pglex", "github.com/xwb1989/sqlparser"
	for _, p := range listPackages(t, "./...") {
		_, reader := sqlReaders[p.ImportPath]
		files := slices.Concat(p.GoFiles, p.TestGoFiles, p.XTestGoFiles)
		for _, f := range files {
			for imp, uses := range pglexUses(t, filepath.Join(p.Dir, f)) {
				switch {
				case under(imp, parserPkg) && p.ImportPath != "countwall/planner":
					t.Errorf("%s (%s) imports %s; only the planner parses SQL", p.ImportPath, f, imp)
				case imp == lexer && !reader:
					for _, u := range uses {
						if !slices.Contains(pglexWriters, u) {
							t.Errorf("%s (%s) uses pglex.%s; outside %v a package may only quote names with pglex", p.ImportPath, f, u, slices.Sorted(maps.Keys(sqlReaders)))
						}
					}
				}
			}
		}
	}
}

// pglexUses is what a Go file uses of the SQL readers it imports: for
// each of countwall/pglex and xwb1989/sqlparser (and its packages) it
// imports, the names it selects from it.
func pglexUses(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	names := map[string]string{} // local name -> import path
	out := map[string][]string{}
	for _, spec := range f.Imports {
		imp, _ := strconv.Unquote(spec.Path.Value)
		if imp != "countwall/pglex" && !under(imp, "github.com/xwb1989/sqlparser") {
			continue
		}
		local := imp[strings.LastIndex(imp, "/")+1:]
		if spec.Name != nil {
			local = spec.Name.Name
		}
		names[local], out[imp] = imp, nil
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && names[id.Name] != "" {
				out[names[id.Name]] = append(out[names[id.Name]], sel.Sel.Name)
			}
		}
		return true
	})
	return out
}

// firewall are the firewall's packages and the leaves it stands on. dataset
// is among them: it is the owner's tool that writes the protected tables,
// imported by config/starter (`countwall init`) and by the firewall's
// tests, so an arrow from it to the attacks would be one from the firewall.
var firewall = []string{
	"countwall/proxy", "countwall/planner", "countwall/mechanisms", "countwall/config", "countwall/ir",
	"countwall/pglex", "countwall/pgerror", "countwall/pgtypes", "countwall/dataset",
}

// TestImportFactsFirewallNeverImportsAttacks: no firewall package, tests
// included, imports anything under attacks, directly or through what it
// imports (DESIGN.md section 1: the risk solvers are a library below the
// Engine; the firewall never imports the attack tools).
func TestImportFactsFirewallNeverImportsAttacks(t *testing.T) {
	pkgs := listPackages(t, "./...")
	deps := map[string][]string{}
	for _, p := range pkgs {
		deps[p.ImportPath] = p.Deps
	}
	for _, p := range pkgs {
		if !slices.ContainsFunc(firewall, func(root string) bool { return under(p.ImportPath, root) }) {
			continue
		}
		for _, imp := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
			if under(imp, "countwall/attacks") {
				t.Errorf("%s imports %s; the firewall never imports the attacks", p.ImportPath, imp)
				continue
			}
			for _, d := range deps[imp] {
				if under(d, "countwall/attacks") {
					t.Errorf("%s imports %s through %s; the firewall never imports the attacks", p.ImportPath, d, imp)
				}
			}
		}
	}
}

// TestImportFactsRiskIsALibrary: the risk solvers stand on the audit's
// release form alone (and what it stands on, the lexer and its error
// codes), never on a database driver: what they find depends only on what
// the audit says left the firewall.
func TestImportFactsRiskIsALibrary(t *testing.T) {
	allowed := []string{"countwall/proxy/risk", "countwall/proxy/state/release", "countwall/pglex", "countwall/pgerror"}
	for _, d := range listPackages(t, "-deps", "-test", "countwall/proxy/risk") {
		path, _, _ := strings.Cut(d.ImportPath, " ") // a test variant: "countwall/proxy/risk [countwall/proxy/risk.test]"
		switch {
		case under(path, "countwall") && !slices.Contains(allowed, path) && path != "countwall/proxy/risk.test":
			t.Errorf("proxy/risk depends on %s; it may use the release form (and pglex under it) only", path)
		case path == "database/sql", under(path, "modernc.org/sqlite"), under(path, "github.com/jackc/pgx/v5"), under(path, "github.com/xwb1989/sqlparser"):
			t.Errorf("proxy/risk depends on %s; it opens no database and parses no SQL", path)
		}
	}
}
