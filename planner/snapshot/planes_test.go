package snapshot

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"countwall/ir"
	"countwall/planner/internal/fixture"
)

// readFile reads the table of the SQLite file at path as the store would,
// in the order of unit.
func readFile(t testing.TB, path, table, unit string) *Table {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	snap, err := readSnapshot(context.Background(), conn, table, unit, 1<<30, func() int64 { return 1 }, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// TestPlanesAgreeWithScan holds every condition answered from a declared
// domain's row sets to the scan of every row's code, true rows and false,
// on a seeded table whose columns also hold values between and outside
// their domains (reals and text in integer columns, text outside the
// categories, NULLs): 4,000 seeded leaves for narrow domains (planes) and
// as many for wide ones (ranks), of which at least a quarter must take
// the domain's row sets.
func TestPlanesAgreeWithScan(t *testing.T) {
	wide := func(named ...string) []string {
		out := append([]string(nil), named...)
		for i := range 300 {
			out = append(out, fmt.Sprintf("w%03d", (i*7)%300))
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		domains map[string]*ir.Domain
		ranks   bool
	}{
		{"planes", map[string]*ir.Domain{
			"age":    {IsRange: true, Min: 0, Max: 9},
			"income": {IsRange: true, Min: -3, Max: 20},
			"sex":    {Categories: []string{"M", "F", "", "Fa"}},
			"suburb": {Categories: []string{"South", "North", "East", "a_b", "Z"}},
		}, false},
		{"ranks", map[string]*ir.Domain{
			"age":    {IsRange: true, Min: -300, Max: 300},
			"income": {IsRange: true, Min: -3, Max: 100000},
			"sex":    {Categories: wide("M", "F", "", "Fa")},
			"suburb": {Categories: wide("South", "North", "East", "a_b", "Z")},
		}, true},
		{"dictionary", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(36, 5))
			path := filepath.Join(t.TempDir(), "people.db")
			fixture.WritePeople(t, path, fixture.SQLRows(fixture.Rows(r, 3000)),
				`INSERT INTO people VALUES (1, 2.5, 'G', 'Nz', 3.5), (2, 'x', x'00', 7, 'abc'), (3, -1.5, 'Fa', 'A', 20.0)`)
			snap := readFile(t, path, "people", "id")
			table := fixture.People()
			for col, d := range tc.domains {
				table.Columns[col].Domain = d
			}
			if n := planesAgreeWithScan(t, snap, table, fixture.Gen{R: r}, tc.domains == nil, tc.ranks); n < 4000/4 {
				t.Errorf("only %d of 4000 leaves took the domain's row sets", n)
			}
		})
	}
}

// planesAgreeWithScan checks 4,000 leaves and says how many the domains'
// row sets (the dictionary's planes, when dict) answered.
func planesAgreeWithScan(t *testing.T, snap *Table, table *ir.Table, gen fixture.Gen, dict, ranks bool) int {
	t.Helper()
	answered := 0
	for i := range 4000 {
		p := gen.Leaf()
		e := newSnapEval(snap, table, ir.Needs{Oblivious: true})
		pt, pf, ok := e.planeLeaf(p, true)
		if dict {
			pt, pf, ok = dictLeafOf(e, p)
		}
		if !ok {
			e.release()
			continue
		}
		answered++
		if _, isRanks := e.domainRowsFor(e.column(leafColumn(p)), leafColumn(p)).(*domainRanks); isRanks != ranks {
			t.Fatalf("leaf %d: ranks %v, want %v", i, isRanks, ranks)
		}
		c, set, negate, ok := e.leafSet(p)
		if !ok {
			t.Fatalf("leaf %d: the domain's row sets answered a condition the scan declines", i)
		}
		st, sf := e.scanLeaf(c, set, oneRange(p))
		if negate {
			st, sf = sf, st
		}
		if fmt.Sprint(pt) != fmt.Sprint(st) || fmt.Sprint(pf) != fmt.Sprint(sf) {
			t.Errorf("leaf %d %#v: row sets and scan differ (true %d and %d rows, false %d and %d)", i, p, pt.count(), st.count(), pf.count(), sf.count())
		}
		e.release()
	}
	return answered
}

// dictLeafOf is p answered from its column's dictionary planes.
func dictLeafOf(e *snapEval, p ir.Pred) (t, f bitset, ok bool) {
	c, set, negate, ok := e.leafSet(p)
	if !ok {
		return nil, nil, false
	}
	t, ok = e.dictLeaf(c, set, p)
	if !ok {
		return nil, nil, false
	}
	return e.falseRows(c, t, negate, true)
}

func leafColumn(p ir.Pred) string {
	column, _, _ := planeLiterals(p)
	return column
}

// TestPlanesWorkIsNotSetByOnePerson is the timing check of the planes:
// neighbouring tables that differ in one person's values (a value of the
// domain, a real between two of its values, text in an integer column, a
// value outside the categories, a NULL, a value far outside the range)
// get the same passes from every statement: as many word passes over
// planes, bit planes of ranks read and scans of the codes, decided by the
// statement, the domains and the width of the dictionary's codes. The counts are held to the evaluation that chooses its way by
// the data.
func TestPlanesWorkIsNotSetByOnePerson(t *testing.T) {
	worlds := []struct{ name, row string }{
		{"none", ""},
		{"a domain value", "(3000, 3, 'F', 7)"},
		{"a real between two domain values", "(3000, 3.5, 'F', 7)"},
		{"text in an integer column", "(3000, 'three', 'F', 'NaN')"},
		{"outside the categories", "(3000, 3, 'X', 7)"},
		{"NULLs", "(3000, NULL, NULL, NULL)"},
		{"far outside the range", "(3000, 200, 'M', 100000)"},
	}
	lit := fixture.IntLit
	// id's domain of 100,001 values takes ranks of 18 bits.
	statements := []struct {
		where                         ir.Pred
		planePasses, rankReads, scans int
	}{
		{&ir.Compare{Column: "age", Op: "=", Value: lit(3)}, 1, 0, 0},
		{&ir.And{Left: &ir.Between{Column: "age", Lo: lit(2), Hi: lit(5)}, Right: &ir.Compare{Column: "sex", Op: "=", Value: fixture.TextLit("F")}}, 2, 0, 0},
		{&ir.In{Column: "score", Values: []ir.Literal{lit(7), lit(100), lit(250)}, Negate: true}, 4, 0, 0},
		{&ir.Not{Inner: &ir.Or{Left: &ir.Compare{Column: "age", Op: "<", Value: lit(4)}, Right: &ir.Compare{Column: "score", Op: ">=", Value: lit(100)}}}, 4, 0, 0},
		{&ir.And{Left: &ir.Compare{Column: "score", Op: ">", Value: lit(300)}, Right: &ir.Compare{Column: "sex", Op: "<>", Value: fixture.TextLit("X")}}, 2, 17, 0},
		// sex's dictionary planes (X is not a domain value): the ranges of
		// the statement, held or not. A WHERE's AND needs only true rows; a
		// NOT, NOT IN and NOT BETWEEN the false ones too (a pass each).
		{&ir.In{Column: "sex", Values: []ir.Literal{fixture.TextLit("F"), fixture.TextLit("X"), fixture.TextLit("Q")}}, 3, 0, 0},
		{&ir.Between{Column: "sex", Lo: fixture.TextLit("A"), Hi: fixture.TextLit("X")}, 1, 0, 0},
		{&ir.Compare{Column: "age", Op: "<=", Value: lit(6)}, 1, 0, 0},
		{&ir.Compare{Column: "id", Op: ">", Value: lit(1500)}, 0, 18, 0},
		{&ir.Compare{Column: "id", Op: "=", Value: lit(3000)}, 0, 18, 0},
		{&ir.And{Left: &ir.Between{Column: "id", Lo: lit(10), Hi: lit(1999)}, Right: &ir.In{Column: "id", Values: []ir.Literal{lit(5), lit(3000)}}}, 0, 72, 0},
		// Outside id's domain: its codes (two bytes wide) bit-sliced.
		{&ir.Compare{Column: "id", Op: ">", Value: lit(200000)}, 0, 17, 0},
		{&ir.Like{Column: "sex", Pattern: "F%"}, 0, 0, 1},
	}
	table := &ir.Table{Name: "people", PrivacyUnit: "id", Policy: ir.DefaultPolicy(), Columns: map[string]*ir.Column{
		"id":    {Name: "id", Type: ir.TypeInt, Domain: &ir.Domain{IsRange: true, Min: 0, Max: 100000}},
		"age":   {Name: "age", Type: ir.TypeInt, Domain: &ir.Domain{IsRange: true, Min: 0, Max: 6}},
		"sex":   {Name: "sex", Type: ir.TypeText, Domain: &ir.Domain{Categories: []string{"F", "M"}}},
		"score": {Name: "score", Type: ir.TypeInt, Domain: &ir.Domain{IsRange: true, Min: 0, Max: 255}},
	}}
	for _, w := range worlds {
		snap := readFile(t, writeWorld(t, w.row), "people", "id")
		for i, st := range statements {
			q := &ir.Query{Table: "people", Where: st.where}
			e := newSnapEval(snap, table, ir.Needs{Oblivious: true})
			got, ok := e.matched(q)
			if !ok {
				t.Fatalf("%s, statement %d: not evaluated", w.name, i)
			}
			if got, want := e.work, (obliviousWork{st.planePasses, st.rankReads, st.scans}); got != want {
				t.Errorf("%s, statement %d: %+v, want %+v", w.name, i, got, want)
			}
			byData := newSnapEval(snap, table, ir.Needs{})
			want, _ := byData.matched(q)
			if got.count() != want.count() {
				t.Errorf("%s, statement %d: %d rows, the data's way %d", w.name, i, got.count(), want.count())
			}
			e.release()
			byData.release()
		}
	}
}

// writeWorld writes 2,000 people and, when row is not empty, one more.
func writeWorld(t *testing.T, row string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "people.db")
	if row != "" {
		row = "INSERT INTO people VALUES " + row
	}
	fixture.WriteSQL(t, path,
		`CREATE TABLE people (id INTEGER, age INTEGER, sex TEXT, score INTEGER)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
		 INSERT INTO people SELECT i, i % 7, CASE i % 2 WHEN 0 THEN 'F' ELSE 'M' END, i % 500 FROM n`,
		row)
	return path
}

// TestPlanesBudget: the planes of one snapshot reserve their worst case,
// 2K+2 row sets a column, within maxPlaneSets; past it a column keeps the
// scan, decided by the domains' sizes and the order the columns were first
// compared, and answers the same.
func TestPlanesBudget(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	path := filepath.Join(t.TempDir(), "people.db")
	fixture.WritePeople(t, path, fixture.SQLRows(fixture.Rows(r, 500)))
	snap := readFile(t, path, "people", "id")
	table := fixture.People()
	// 2*255+2 = 512 sets each: four fit, the fifth does not.
	var names []string
	for i := range 255 {
		names = append(names, fmt.Sprintf("v%03d", i))
	}
	for _, col := range []string{"age", "income", "id"} {
		table.Columns[col].Domain = &ir.Domain{IsRange: true, Min: 0, Max: 254}
	}
	for _, col := range []string{"sex", "suburb"} {
		table.Columns[col].Domain = &ir.Domain{Categories: names}
	}
	leaf := func(col string) ir.Pred {
		if table.Columns[col].Type == ir.TypeText {
			return &ir.Compare{Column: col, Op: "=", Value: ir.Literal{Kind: ir.LitText, Text: "v007"}}
		}
		return &ir.Compare{Column: col, Op: "<", Value: ir.Literal{Kind: ir.LitInt, Int: 40}}
	}
	for _, tc := range []struct {
		column string
		planes bool
	}{{"age", true}, {"income", true}, {"sex", true}, {"id", true}, {"suburb", false}, {"age", true}, {"suburb", false}} {
		e := newSnapEval(snap, table, ir.Needs{Oblivious: true})
		_, _, ok := e.planeLeaf(leaf(tc.column), true)
		if ok != tc.planes {
			t.Errorf("%s: planes %v, want %v (sets reserved %d)", tc.column, ok, tc.planes, snap.planeSets.Load())
		}
		e.release()
	}
	if got := snap.planeSets.Load(); got != maxPlaneSets {
		t.Errorf("reserved %d sets, want %d", got, maxPlaneSets)
	}
	var held int64
	for _, c := range snap.columns {
		if p := c.planes.Load(); p != nil {
			held += p.rows.memory()
		}
	}
	if got, most := snap.PlaneBytes(), int64(maxPlaneSets)*8*int64(len(snap.allRows)); got != held || got == 0 || got > most {
		t.Errorf("PlaneBytes %d, the planes hold %d (at most %d)", got, held, most)
	}
}
