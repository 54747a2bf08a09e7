package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// listedPackage is what `go list -json` says of one package's imports.
type listedPackage struct {
	ImportPath   string
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
// section 1), the attack programs' runner, report, audit, risk solvers,
// demo and bench drive the attack registry, and the bounds bench asks the
// firewall through the attacks' Querier. Anything new that imports its
// parent fails the test.
var parentImports = []string{
	"countwall/attacks/audit", "countwall/attacks/bench", "countwall/attacks/bounding", "countwall/attacks/demo",
	"countwall/attacks/experiments", "countwall/attacks/report", "countwall/attacks/risk", "countwall/attacks/runner",
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
