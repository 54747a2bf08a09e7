package planner

import (
	"cmp"
	"context"
	"countwall/ir"
	"countwall/planner/internal/fixture"
	"countwall/planner/plan"
	"countwall/planner/snapshot"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The differential test compares the store's answers for random predicates
// with counts computed in Go, row by row, with SQL's three-valued logic.

// tri is a SQL truth value.
type tri int

const (
	triFalse tri = iota
	triTrue
	triUnknown
)

func triOf(b bool) tri {
	if b {
		return triTrue
	}
	return triFalse
}

func triNot(a tri) tri {
	switch a {
	case triTrue:
		return triFalse
	case triFalse:
		return triTrue
	}
	return triUnknown
}

func triAnd(a, b tri) tri {
	switch {
	case a == triFalse || b == triFalse:
		return triFalse
	case a == triTrue && b == triTrue:
		return triTrue
	}
	return triUnknown
}

func triOr(a, b tri) tri {
	switch {
	case a == triTrue || b == triTrue:
		return triTrue
	case a == triFalse && b == triFalse:
		return triFalse
	}
	return triUnknown
}

// leafKind is a predicate kind the differential test draws beside the
// built-in ones: how to draw one, and what it means in Go (ok false for a
// predicate of another kind). A new kind registers one from its own test
// file (derived_test.go is one) and is then run through every backend
// without this file changing.
type leafKind struct {
	draw func(g fixture.Gen) ir.Pred
	eval func(p ir.Pred, row fixture.Row) (t tri, ok bool)
}

// leafKinds are the registered kinds.
var leafKinds []leafKind

// newPredGen draws the differential test's predicates: the fixture's
// kinds, arithmetic guarded as the parser guards it (columnGuard), and the
// kinds registered in leafKinds.
func newPredGen(r *rand.Rand) fixture.Gen {
	g := fixture.Gen{R: r, Guard: columnGuard}
	for _, k := range leafKinds {
		g.Kinds = append(g.Kinds, k.draw)
	}
	return g
}

// evalPred is SQL's WHERE semantics in Go.
func evalPred(p ir.Pred, row fixture.Row) tri {
	switch p := p.(type) {
	case *ir.And:
		return triAnd(evalPred(p.Left, row), evalPred(p.Right, row))
	case *ir.Or:
		return triOr(evalPred(p.Left, row), evalPred(p.Right, row))
	case *ir.Not:
		return triNot(evalPred(p.Inner, row))
	case *ir.Compare:
		return compareValues(row[p.Column], p.Op, p.Value.Value())
	case *ir.Between:
		x := row[p.Column]
		t := triAnd(compareValues(x, ">=", p.Lo.Value()), compareValues(x, "<=", p.Hi.Value()))
		if p.Negate {
			return triNot(t)
		}
		return t
	case *ir.In:
		x := row[p.Column]
		if x == nil {
			return triUnknown
		}
		t := triFalse
		for _, v := range p.Values {
			t = triOr(t, compareValues(x, "=", v.Value()))
		}
		if p.Negate {
			return triNot(t)
		}
		return t
	case *ir.IsNull:
		return triOf((row[p.Column] == nil) != p.Negate)
	case *ir.Like:
		x := row[p.Column]
		if x == nil {
			return triUnknown
		}
		return triOf(likeMatch(x.(string), p.Pattern) != p.Negate)
	case *ir.MathCompare:
		return compareValues(evalExpr(p.Expr, row), p.Op, p.Value.Value())
	}
	for _, k := range leafKinds {
		if t, ok := k.eval(p, row); ok {
			return t
		}
	}
	panic(fmt.Sprintf("evalPred: %T", p))
}

func compareValues(x any, op string, v any) tri {
	if x == nil || v == nil {
		return triUnknown
	}
	var c int
	switch x := x.(type) {
	case int64:
		c = cmpInt(x, v.(int64))
	case string:
		c = strings.Compare(x, v.(string))
	default:
		panic(fmt.Sprintf("compareValues: %T", x))
	}
	switch op {
	case "=":
		return triOf(c == 0)
	case "<>", "!=":
		return triOf(c != 0)
	case "<":
		return triOf(c < 0)
	case "<=":
		return triOf(c <= 0)
	case ">":
		return triOf(c > 0)
	case ">=":
		return triOf(c >= 0)
	}
	panic("compareValues: op " + op)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// evalExpr evaluates an expression; NULL in gives NULL out. The generator
// never divides by zero. Go's / and % truncate toward zero as SQLite's do.
func evalExpr(e ir.Expr, row fixture.Row) any {
	switch e := e.(type) {
	case *ir.ColumnRef:
		return row[e.Column]
	case *ir.NumberLit:
		return e.Value.Value()
	case *ir.BinaryExpr:
		l, r := evalExpr(e.Left, row), evalExpr(e.Right, row)
		if l == nil || r == nil {
			return nil
		}
		a, b := l.(int64), r.(int64)
		switch e.Op {
		case "+":
			return a + b
		case "-":
			return a - b
		case "*":
			return a * b
		case "/":
			return a / b
		case "%":
			return a % b
		}
	case *ir.FuncCall:
		arg := evalExpr(e.Args[0], row)
		if arg == nil {
			return nil
		}
		switch e.Name {
		case "abs":
			if a := arg.(int64); a < 0 {
				return -a
			}
			return arg
		case "length":
			return int64(len([]rune(arg.(string))))
		case "upper":
			return strings.ToUpper(arg.(string))
		}
	}
	panic(fmt.Sprintf("evalExpr: %#v", e))
}

// likeMatch is LIKE with case-sensitive matching and '\' as the escape.
func likeMatch(s, p string) bool {
	for len(p) > 0 {
		switch p[0] {
		case '%':
			p = p[1:]
			for i := 0; i <= len(s); i++ {
				if likeMatch(s[i:], p) {
					return true
				}
			}
			return false
		case '_':
			if len(s) == 0 {
				return false
			}
			s, p = s[1:], p[1:]
		case '\\':
			if len(p) < 2 || len(s) == 0 || s[0] != p[1] {
				return false
			}
			s, p = s[1:], p[2:]
		default:
			if len(s) == 0 || s[0] != p[0] {
				return false
			}
			s, p = s[1:], p[1:]
		}
	}
	return len(s) == 0
}

// goCell is the expected figures of one cell computed in Go.
type goCell struct {
	count int64
	units map[int64]bool
}

func (c *goCell) key() uint32 {
	var k uint32
	for u := range c.units {
		k += plan.RecordKey(fixture.Secret, u)
	}
	return k
}

// TestDifferentialRandomPredicates runs every predicate through both paths
// of the store: SQLite, and the in-memory snapshot, which must answer every
// predicate it is given except math (left to SQLite).
func TestDifferentialRandomPredicates(t *testing.T) {
	ways := map[string]snapshot.Way{"snapshot-listed": snapshot.WayListed, "snapshot-cuts": snapshot.WayCuts,
		"snapshot-others": snapshot.WayOthers, "snapshot-masked": snapshot.WayMasked, "snapshot-scan": snapshot.WayScan}
	for _, path := range []string{"sqlite", "snapshot", "snapshot-listed", "snapshot-cuts", "snapshot-others", "snapshot-masked", "snapshot-scan", "snapshot-rows-only", "snapshot-oblivious"} {
		t.Run(path, func(t *testing.T) {
			if way, ok := ways[path]; ok { // every leaf takes this way
				defer func(old snapshot.Way) { snapshot.LeafWay = old }(snapshot.LeafWay)
				snapshot.LeafWay = way
			}
			if path == "snapshot-rows-only" { // one-condition counts and keys visit rows too
				defer func(old bool) { snapshot.OneConditionTallies = old }(snapshot.OneConditionTallies)
				defer func(old bool) { snapshot.KeyGrids = old }(snapshot.KeyGrids)
				snapshot.OneConditionTallies, snapshot.KeyGrids = false, false
			}
			r := rand.New(rand.NewPCG(20240611, 7))
			rows := fixture.Rows(r, 400)
			s := openDiffStore(t, rows, plan.StoreOptions{NoSnapshot: path == "sqlite"})
			differentialRandomPredicates(t, s, r, rows, path != "sqlite", path == "snapshot-oblivious")
		})
	}
}

// hasMath reports whether a predicate holds a MathCompare.
func hasMath(p ir.Pred) bool {
	switch p := p.(type) {
	case *ir.And:
		return hasMath(p.Left) || hasMath(p.Right)
	case *ir.Or:
		return hasMath(p.Left) || hasMath(p.Right)
	case *ir.Not:
		return hasMath(p.Inner)
	case *ir.MathCompare:
		return true
	}
	return false
}

// runPath answers q through the snapshot when snapshot is set (failing the
// test if it declines a predicate without math), else through SQLite.
func runPath(t *testing.T, s *Store, snapshot bool, tbl *ir.Table, q *ir.Query, needs ir.Needs, secret []byte) (*ir.Result, error) {
	t.Helper()
	if !snapshot || hasMath(q.Where) {
		return s.Run(context.Background(), tbl, q, needs, secret)
	}
	res, ok, err := s.snap.Answer(context.Background(), tbl, q, needs, secret)
	if !ok {
		t.Fatalf("the snapshot declined %s", fixture.DebugSQL(tbl, q))
	}
	return res, err
}

// differentialRandomPredicates checks s, which holds rows, against Go for
// random predicates drawn from r.
// Under oblivious every query asks for the data-oblivious evaluation.
func differentialRandomPredicates(t *testing.T, s *Store, r *rand.Rand, rows []fixture.Row, snapshot, oblivious bool) {
	people := fixture.People()
	gen := newPredGen(r)

	var matchedSome, matchedNone int
	for i := range 200 {
		where := gen.Pred(3)
		// Expected figures per sex group (and for the whole table under "").
		total := &goCell{units: map[int64]bool{}}
		bySex := map[ir.GroupValue]*goCell{}
		for _, row := range rows {
			if evalPred(where, row) != triTrue {
				continue
			}
			g := ir.GroupValue{Null: true}
			if sex, ok := row["sex"].(string); ok {
				g = ir.GroupValue{Text: sex}
			}
			if bySex[g] == nil {
				bySex[g] = &goCell{units: map[int64]bool{}}
			}
			for _, c := range []*goCell{total, bySex[g]} {
				c.count++
				if id, ok := row["id"].(int64); ok {
					c.units[id] = true
				}
			}
		}
		if total.count > 0 {
			matchedSome++
		} else {
			matchedNone++
		}

		q := &ir.Query{Table: "people", Where: where}
		res, err := runPath(t, s, snapshot, people, q, ir.Needs{Oblivious: oblivious}, nil)
		if err != nil {
			t.Fatalf("predicate %d: %v\n%s", i, err, fixture.DebugSQL(people, q))
		}
		if got := res.Cells[0].Count; got != total.count {
			t.Errorf("predicate %d: store counts %d, Go counts %d\n%s", i, got, total.count, fixture.DebugSQL(people, q))
			continue
		}
		if i%4 != 0 {
			continue
		}
		// A quarter of the predicates also check units, keys, COUNT(DISTINCT)
		// and a GROUP BY.
		dq := &ir.Query{Table: "people", Agg: ir.CountDistinct, Where: where}
		res, err = runPath(t, s, snapshot, people, dq, ir.Needs{Key: true, Oblivious: oblivious}, fixture.Secret)
		if err != nil {
			t.Fatal(err)
		}
		c := res.Cells[0]
		if n := int64(len(total.units)); c.Count != n || c.Units != n || c.Key != total.key() {
			t.Errorf("predicate %d: distinct %d, units %d, key %d; Go says %d units, key %d", i, c.Count, c.Units, c.Key, n, total.key())
		}
		gq := &ir.Query{Table: "people", GroupBy: []string{"sex"}, Where: where}
		// Counts alone, as idp and bdp ask for them.
		res, err = runPath(t, s, snapshot, people, gq, ir.Needs{TableSize: true, Oblivious: oblivious}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Cells) != len(bySex) {
			t.Errorf("predicate %d: %d groups counted alone, Go finds %d", i, len(res.Cells), len(bySex))
		}
		for _, c := range res.Cells {
			if want := bySex[c.Group[0]]; want == nil || c.Count != want.count {
				t.Errorf("predicate %d group %+v counted alone: %d; Go says %+v", i, c.Group[0], c.Count, want)
			}
		}
		res, err = runPath(t, s, snapshot, people, gq, ir.Needs{Units: i%8 == 0, Key: i%8 != 0, Oblivious: oblivious}, fixture.Secret)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Cells) != len(bySex) {
			t.Errorf("predicate %d: %d groups, Go finds %d", i, len(res.Cells), len(bySex))
		}
		for _, c := range res.Cells {
			want := bySex[c.Group[0]]
			if want == nil {
				t.Errorf("predicate %d: group %+v not in Go's answer", i, c.Group[0])
				continue
			}
			wantKey := uint32(0)
			if i%8 != 0 {
				wantKey = want.key()
			}
			if c.Count != want.count || c.Units != int64(len(want.units)) || c.Key != wantKey {
				t.Errorf("predicate %d group %+v: count %d units %d key %d; Go says %d, %d, %d",
					i, c.Group[0], c.Count, c.Units, c.Key, want.count, len(want.units), wantKey)
			}
		}
	}
	// The generator must exercise both outcomes for the comparison to mean
	// anything.
	if matchedSome < 40 || matchedNone < 10 {
		t.Errorf("weak generator: %d predicates matched rows, %d matched none", matchedSome, matchedNone)
	}
	t.Logf("%d predicates matched rows, %d matched none", matchedSome, matchedNone)
}

func TestDifferentialLikeReference(t *testing.T) {
	cases := []struct {
		s, p string
		want bool
	}{
		{"North", "N%", true}, {"north", "N%", false}, {"a_b", `a\_b`, true}, {"axb", `a\_b`, false},
		{"axb", "a_b", true}, {"a%b", `a\%b`, true}, {"", "%", true}, {"", "", true}, {"x", "", false},
		{"East", "_ast", true}, {"O'Brien", "%'%", true}, {"ab", `ab\`, false},
	}
	for _, tc := range cases {
		if got := likeMatch(tc.s, tc.p); got != tc.want {
			t.Errorf("likeMatch(%q, %q) = %v", tc.s, tc.p, got)
		}
	}
}

// openDiffStore writes the generated rows to a fresh file and opens it.
func openDiffStore(t *testing.T, rows []fixture.Row, opts plan.StoreOptions) *Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "diff.db")
	fixture.WritePeople(t, path, fixture.SQLRows(rows))
	s, err := OpenStore(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// boundedReference computes, in Go, the counts a bounded Run must return:
// rows without a unit left out, each (cell, unit) pair clamped at C rows (1
// for COUNT(DISTINCT)), and, when rank, each unit kept in the G cells of
// smallest CellRank. Cells are keyed by groupKey; group is the column (or "").
func boundedReference(rows []fixture.Row, where ir.Pred, group string, agg ir.AggKind, b ir.Bounds, rank bool) map[string]int64 {
	type pair struct {
		cell  string
		value any
		rows  int64
	}
	byUnit := map[int64][]*pair{}
	for _, row := range rows {
		unit, ok := row["id"].(int64)
		if !ok || (where != nil && evalPred(where, row) != triTrue) {
			continue
		}
		var value any
		cell := ""
		if group != "" {
			value = row[group]
			g := ir.GroupValue{Null: true}
			if s, ok := value.(string); ok {
				g = ir.GroupValue{Text: s}
			} else if n, ok := value.(int64); ok {
				g = ir.GroupValue{Text: fmt.Sprint(n)}
			}
			cell = plan.GroupKey([]ir.GroupValue{g})
		}
		found := false
		for _, p := range byUnit[unit] {
			if p.cell == cell {
				p.rows++
				found = true
			}
		}
		if !found {
			byUnit[unit] = append(byUnit[unit], &pair{cell: cell, value: value, rows: 1})
		}
	}
	out := map[string]int64{}
	for unit, pairs := range byUnit {
		if rank {
			slices.SortFunc(pairs, func(a, b *pair) int {
				var ga, gb []any
				if group != "" {
					ga, gb = []any{a.value}, []any{b.value}
				}
				return cmp.Compare(plan.CellRank(fixture.Secret, unit, ga...), plan.CellRank(fixture.Secret, unit, gb...))
			})
			pairs = pairs[:min(int64(len(pairs)), b.MaxGroupsPerUnit)]
		}
		for _, p := range pairs {
			if agg == ir.CountDistinct {
				out[p.cell]++
			} else {
				out[p.cell] += min(p.rows, b.MaxRowsPerUnit)
			}
		}
	}
	return out
}

// TestDifferentialBoundedCounts checks the bounded rendering (Needs.Bound)
// against boundedReference for random predicates, with and without GROUP BY,
// with and without a declared domain, for several C and G. The generated
// table has about 2.7 rows per unit spread over several sexes and ages, so
// both the clamp and the choice of cells change the counts.
//
// It runs on both paths: SQLite's bounded SQL and the snapshot's bounded
// counts in memory, which answer every predicate the snapshot evaluates.
func TestDifferentialBoundedCounts(t *testing.T) {
	for _, backend := range []struct {
		name string
		opts plan.StoreOptions
		path string
		min  int // of the 120 runs; the snapshot declines some predicates
		way  snapshot.Way
		// oblivious asks for the data-oblivious evaluation
		oblivious bool
	}{
		{"sqlite", plan.StoreOptions{NoSnapshot: true}, ir.PathSQLite, 120, snapshot.WayCheapest, false},
		{"snapshot", plan.StoreOptions{}, ir.PathSnapshot, 80, snapshot.WayCheapest, false},
		{"snapshot-listed", plan.StoreOptions{}, ir.PathSnapshot, 80, snapshot.WayListed, false},
		{"snapshot-cuts", plan.StoreOptions{}, ir.PathSnapshot, 80, snapshot.WayCuts, false},
		{"snapshot-others", plan.StoreOptions{}, ir.PathSnapshot, 80, snapshot.WayOthers, false},
		{"snapshot-oblivious", plan.StoreOptions{}, ir.PathSnapshot, 80, snapshot.WayCheapest, true},
	} {
		t.Run(backend.name, func(t *testing.T) {
			defer func(old snapshot.Way) { snapshot.LeafWay = old }(snapshot.LeafWay)
			snapshot.LeafWay = backend.way
			r := rand.New(rand.NewPCG(20240611, 13))
			rows := fixture.Rows(r, 400)
			paths := differentialBoundedCounts(t, openDiffStore(t, rows, backend.opts), r, rows, backend.oblivious)
			if paths[backend.path] < backend.min {
				t.Errorf("%d of the bounded runs answered on the %s path (%v), want at least %d", paths[backend.path], backend.name, paths, backend.min)
			}
		})
	}
}

// differentialBoundedCounts checks the bounded counts of s, which holds
// rows, against boundedReference for random predicates drawn from r, and
// returns how many runs each path answered.
func differentialBoundedCounts(t *testing.T, s *Store, r *rand.Rand, rows []fixture.Row, oblivious bool) map[string]int {
	plain := fixture.People()
	withDomain := fixture.People()
	withDomain.Columns["sex"] = &ir.Column{Name: "sex", Type: ir.TypeText, Domain: &ir.Domain{Categories: []string{"F", "M", "X"}}}
	withDomain.Columns["age"] = &ir.Column{Name: "age", Type: ir.TypeInt, Domain: &ir.Domain{IsRange: true, Min: 0, Max: 9}}
	gen := newPredGen(r)
	ctx := context.Background()

	type variant struct {
		table *ir.Table
		group string
		agg   ir.AggKind
		b     ir.Bounds
	}
	var variants []variant
	for _, b := range []ir.Bounds{{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 1}, {MaxRowsPerUnit: 2, MaxGroupsPerUnit: 1}, {MaxRowsPerUnit: 3, MaxGroupsPerUnit: 2}, {MaxRowsPerUnit: 1, MaxGroupsPerUnit: 3}, {MaxRowsPerUnit: 2, MaxGroupsPerUnit: 20}} {
		variants = append(variants,
			variant{plain, "", ir.CountRows, b},
			variant{plain, "sex", ir.CountRows, b},
			variant{withDomain, "sex", ir.CountRows, b},
			variant{withDomain, "age", ir.CountRows, b},
			variant{withDomain, "age", ir.CountDistinct, b},
		)
	}
	var ranked, clamped int
	paths := map[string]int{}
	for i := range 60 {
		var where ir.Pred
		if i > 0 {
			where = gen.Pred(2)
		}
		v := variants[i%len(variants)]
		for _, v := range []variant{v, variants[(i*7+3)%len(variants)]} {
			q := &ir.Query{Table: "people", Agg: v.agg, Where: where}
			if v.group != "" {
				q.GroupBy = []string{v.group}
			}
			res, err := s.Run(ctx, v.table, q, ir.Needs{Bound: true, Bounds: v.b, Units: i%2 == 0, Oblivious: oblivious}, fixture.Secret)
			if err != nil {
				t.Fatalf("predicate %d: %v", i, err)
			}
			shape, err := plan.NewShape(v.table, q)
			if err != nil {
				t.Fatal(err)
			}
			want, rank := plan.EffectiveBounds(v.table, q, ir.Needs{Bound: true, Bounds: v.b}, shape)
			if res.Bounds != want {
				t.Errorf("predicate %d %+v: bounds in force %+v, want %+v", i, v.b, res.Bounds, want)
			}
			paths[res.Path]++
			if rank {
				ranked++
			}
			if v.b.MaxRowsPerUnit > 1 && v.agg == ir.CountRows {
				clamped++
			}
			ref := boundedReference(rows, where, v.group, v.agg, v.b, rank)
			seen := 0
			for _, c := range res.Cells {
				k := ""
				if v.group != "" {
					k = plan.GroupKey(c.Group)
				}
				if c.Count != ref[k] {
					t.Errorf("predicate %d, group %q %+v, bounds %+v (rank %v): cell %s counts %d, Go counts %d",
						i, v.group, v.agg, v.b, rank, k, c.Count, ref[k])
				}
				if i%2 == 0 && c.Units > c.Count {
					t.Errorf("predicate %d: cell %s has %d units for a count of %d", i, k, c.Units, c.Count)
				}
				if ref[k] > 0 {
					seen++
				}
			}
			// Every non-zero cell of the reference is in the answer, except
			// groups outside a declared domain.
			if !shape.Complete {
				nonZero := 0
				for _, n := range ref {
					if n > 0 {
						nonZero++
					}
				}
				if seen != nonZero {
					t.Errorf("predicate %d, group %q: %d non-zero cells, Go finds %d", i, v.group, seen, nonZero)
				}
			}
		}
	}
	if ranked < 20 || clamped < 20 {
		t.Errorf("weak coverage: %d runs chose cells, %d clamped rows", ranked, clamped)
	}
	return paths
}
