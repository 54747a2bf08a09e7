package snapshot_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"countwall/ir"
	"countwall/planner/internal/fixture"
	"countwall/planner/plan"
	"countwall/planner/snapshot"
)

// mixedDDL declares every affinity the snapshot distinguishes; the rows put
// values of other storage classes in them, as SQLite's dynamic typing allows
// (a CSV's '?' in an integer column, blobs in a text column, an untyped column).
const mixedDDL = `CREATE TABLE mixed (id INTEGER, n INTEGER, r REAL, t TEXT, u, d DATE)`

func mixedTable() *ir.Table {
	cols := map[string]*ir.Column{}
	for name, typ := range map[string]ir.ColumnType{"id": ir.TypeInt, "n": ir.TypeInt, "r": ir.TypeReal, "t": ir.TypeText, "u": ir.TypeText, "d": ir.TypeText} {
		cols[name] = &ir.Column{Name: name, Type: typ}
	}
	p := ir.DefaultPolicy()
	p.AllowLike = true
	return &ir.Table{Name: "mixed", PrivacyUnit: "id", Columns: cols, Policy: p}
}

func writeMixed(t *testing.T, path string, r *rand.Rand, rows int) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(mixedDDL); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	pick := func(vals ...any) any { return vals[r.IntN(len(vals))] }
	for range rows {
		_, err := tx.Exec(`INSERT INTO mixed VALUES (?, ?, ?, ?, ?, ?)`,
			pick(int64(r.IntN(60)), int64(r.IntN(60)), nil, "u7", 3.0),
			pick(int64(r.IntN(8)-2), int64(r.IntN(8)), nil, "?", 2.5, []byte("b")),
			pick(float64(r.IntN(8))/2, 1.25, nil, int64(3), "x"),
			pick("F", "M", "f", "", nil, "é", "a_b", "a%b", []byte("F"), "10"),
			pick(int64(1), int64(2), "1", "2", "a", nil, []byte("a"), 1.5),
			pick("2020-01-01", "5", int64(5), nil))
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// mixedPred draws a random predicate over the mixed table.
func mixedPred(r *rand.Rand, depth int) ir.Pred {
	if depth > 0 && r.IntN(3) > 0 {
		switch r.IntN(3) {
		case 0:
			return &ir.And{Left: mixedPred(r, depth-1), Right: mixedPred(r, depth-1)}
		case 1:
			return &ir.Or{Left: mixedPred(r, depth-1), Right: mixedPred(r, depth-1)}
		default:
			return &ir.Not{Inner: mixedPred(r, depth-1)}
		}
	}
	col := []string{"n", "r", "t", "u", "d", "id"}[r.IntN(6)]
	lit := func() ir.Literal {
		switch col {
		case "n", "id":
			if r.IntN(4) == 0 {
				return ir.Literal{Kind: ir.LitFloat, Float: float64(r.IntN(12)-3) / 2}
			}
			return fixture.IntLit(int64(r.IntN(12) - 3))
		case "r":
			return ir.Literal{Kind: ir.LitFloat, Float: float64(r.IntN(10)) / 2}
		}
		return fixture.TextLit([]string{"F", "M", "f", "", "1", "2", "a", "5", "2020-01-01", "é", "10"}[r.IntN(11)])
	}
	ops := []string{"=", "<>", "<", "<=", ">", ">="}
	switch r.IntN(5) {
	case 0:
		return &ir.Compare{Column: col, Op: ops[r.IntN(len(ops))], Value: lit()}
	case 1:
		return &ir.Between{Column: col, Lo: lit(), Hi: lit(), Negate: r.IntN(2) == 0}
	case 2:
		return &ir.In{Column: col, Values: []ir.Literal{lit(), lit(), lit()}, Negate: r.IntN(2) == 0}
	case 3:
		return &ir.IsNull{Column: col, Negate: r.IntN(2) == 0}
	}
	pats := []string{"%", "F%", "_", "a\\_b", "a_b", "%b", "1%", "é", "__", "a\\%b"}
	return &ir.Like{Column: col, Pattern: pats[r.IntN(len(pats))], Negate: r.IntN(2) == 0}
}

// TestSnapshotMatchesSQLiteOnMixedClasses compares the snapshot with SQLite
// query by query, figure by figure, on a table whose columns hold values of
// every storage class: where the snapshot answers, it must answer exactly as
// SQLite does (cells, order, units, keys); where SQLite converts values in
// ways the snapshot does not model, it must decline. 300 predicates, seeded.
func TestSnapshotMatchesSQLiteOnMixedClasses(t *testing.T) {
	// Once with each leaf taking the cheapest way, then once with every
	// leaf taking each way in turn.
	defer func(old snapshot.Way) { snapshot.LeafWay = old }(snapshot.LeafWay)
	for _, way := range []snapshot.Way{snapshot.WayCheapest, snapshot.WayListed, snapshot.WayCuts, snapshot.WayOthers, snapshot.WayMasked, snapshot.WayScan} {
		snapshot.LeafWay = way
		t.Run(fmt.Sprintf("way-%d", way), func(t *testing.T) { snapshotMatchesSQLiteOnMixedClasses(t, false) })
	}
	snapshot.LeafWay = snapshot.WayCheapest
	t.Run("oblivious", func(t *testing.T) { snapshotMatchesSQLiteOnMixedClasses(t, true) })
}

func snapshotMatchesSQLiteOnMixedClasses(t *testing.T, oblivious bool) {
	r := rand.New(rand.NewPCG(14, 2026))
	path := filepath.Join(t.TempDir(), "mixed.db")
	writeMixed(t, path, r, 500)
	raw, fast := openPaths(t, path, plan.StoreOptions{})
	ctx := context.Background()
	tbl := mixedTable()
	answered := 0
	const n = 300
	for i := range n {
		q := &ir.Query{Table: "mixed", Where: mixedPred(r, 3)}
		needs := ir.Needs{}
		switch i % 4 {
		case 1:
			q.Agg, needs = ir.CountDistinct, ir.Needs{Key: true, TableSize: true}
		case 2:
			q.GroupBy, needs = []string{"t"}, ir.Needs{Units: true}
		case 3:
			q.GroupBy, needs = []string{"t", "r"}, ir.Needs{Key: true}
			q.OrderBy = []ir.Order{{Column: "r", Desc: true}}
		}
		needs.Oblivious = oblivious
		want, werr := raw.Run(ctx, tbl, q, needs, fixture.Secret)
		got, ok, gerr := fast.Answer(ctx, tbl, q, needs, fixture.Secret)
		if !ok {
			continue
		}
		answered++
		withoutPath(want, got)
		if fmt.Sprint(werr) != fmt.Sprint(gerr) || !reflect.DeepEqual(want, got) {
			t.Errorf("query %d %s\nSQLite:   %+v %v\nsnapshot: %+v %v", i, fixture.DebugSQL(tbl, q), want, werr, got, gerr)
		}
	}
	// Declines are for the rare conversions only; most queries must be answered.
	if answered < n/2 {
		t.Errorf("the snapshot answered only %d of %d queries", answered, n)
	}
	t.Logf("the snapshot answered %d of %d queries", answered, n)
}

// TestSnapshotSeesWritesByOthers writes to the protected file through
// another connection between two queries: the second must count the new row,
// in rollback-journal mode (the header's change counter tells) and in WAL mode
// (data_version tells).
func TestSnapshotSeesWritesByOthers(t *testing.T) {
	for _, mode := range []string{"delete", "wal"} {
		t.Run(mode, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "people.db")
			fixture.WritePeople(t, path, fixture.PeopleRows)
			w, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			w.SetMaxOpenConns(1) // one connection, kept open: WAL's files stay
			if _, err := w.Exec("PRAGMA journal_mode = " + mode); err != nil {
				t.Fatal(err)
			}
			_, s := openPaths(t, path, plan.StoreOptions{})
			snapshotSeesWrites(t, s, w)
		})
	}
}

func snapshotSeesWrites(t *testing.T, s *snapshot.Store, w *sql.DB) {
	ctx := context.Background()
	people := fixture.People()
	count := func() int64 {
		t.Helper()
		res, err := s.Run(ctx, people, &ir.Query{Table: "people", Where: &ir.Compare{Column: "sex", Op: "=", Value: fixture.TextLit("F")}}, ir.Needs{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.Cells[0].Count
	}
	before := count()
	first, err := s.Current(ctx, "people")
	if err != nil || first == nil {
		t.Fatalf("no snapshot: %v", err)
	}
	if again, _ := s.Current(ctx, "people"); again != first {
		t.Error("an unchanged file was read again")
	}
	for i := range 3 {
		if _, err := w.Exec(`INSERT INTO people VALUES (?, 30, 'F', 'North', 10)`, 100+i); err != nil {
			t.Fatal(err)
		}
		if after := count(); after != before+int64(i)+1 {
			t.Errorf("after insert %d by another connection: %d, want %d", i+1, after, before+int64(i)+1)
		}
	}
	if now, _ := s.Current(ctx, "people"); now == first {
		t.Error("the snapshot was not read again after the writes")
	}
}

// TestSnapshotOverTheLimitFallsBack bounds snapshots to a few bytes: every
// query is answered by SQLite, with the same figures.
func TestSnapshotOverTheLimitFallsBack(t *testing.T) {
	var infos []plan.SnapshotInfo
	path := filepath.Join(t.TempDir(), "people.db")
	fixture.WritePeople(t, path, fixture.PeopleRows)
	_, s := openPaths(t, path, plan.StoreOptions{SnapshotMaxBytes: 10, OnSnapshot: func(i plan.SnapshotInfo) { infos = append(infos, i) }})
	res, err := s.Run(context.Background(), fixture.People(), &ir.Query{Table: "people"}, ir.Needs{}, nil)
	if err != nil || res.Cells[0].Count != 13 {
		t.Fatalf("got %+v, %v; want 13 rows", res, err)
	}
	if snap, _ := s.Current(context.Background(), "people"); snap != nil {
		t.Error("a snapshot over the limit was kept")
	}
	if len(infos) != 1 || infos[0].Err == nil {
		t.Errorf("reports %+v, want one saying why the table stays in SQLite", infos)
	}
}

// TestSnapshotKeysWithOneRowPerUnit checks contributor keys and unit counts
// on a table keyed by its unit (the path that sums keys without a seen-set,
// and subtracts from the table's total when most rows match) against SQLite,
// for 200 seeded random predicates, a few of NULL units included.
func TestSnapshotKeysWithOneRowPerUnit(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 14))
	rows, sqlRows := oneRowPerUnit(r, 300, 37)
	raw, fast := openBothPaths(t, sqlRows)
	people := fixture.People()
	if snap, err := fast.Current(context.Background(), "people"); err != nil || !snap.UniqueColumn("id") {
		t.Fatalf("the id column is not seen as one row per unit (%v)", err)
	}
	gen := fixture.Gen{R: r}
	most := 0
	for i := range 200 {
		q := &ir.Query{Table: "people", Where: gen.Pred(2)}
		if i%5 == 0 {
			q.Where = nil // every row: the complement is empty
		}
		if i%3 == 0 {
			q.GroupBy = []string{"sex"}
		}
		want, err := raw.Run(context.Background(), people, q, ir.Needs{Key: true}, fixture.Secret)
		if err != nil {
			t.Fatal(err)
		}
		got, err := answer(t, fast, people, q, ir.Needs{Key: true}, fixture.Secret)
		if err != nil {
			t.Fatal(err)
		}
		withoutPath(want, got)
		if !reflect.DeepEqual(want, got) {
			t.Errorf("query %d %s: SQLite %+v, snapshot %+v", i, fixture.DebugSQL(people, q), want.Cells, got.Cells)
		}
		if len(q.GroupBy) == 0 && 2*want.Cells[0].Units > int64(len(rows)) {
			most++
		}
	}
	if most < 40 {
		t.Errorf("only %d predicates matched most units: the subtracting path is barely exercised", most)
	}
}

// TestSnapshotGroupsOnKeyedTable: GROUP BY on a table declared keyed by its
// unit, where each cell's units are its rows and its key the sum of their
// units' keys, against SQLite for 150 seeded predicates under every need.
func TestSnapshotGroupsOnKeyedTable(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 2026))
	_, sqlRows := oneRowPerUnit(r, 300, 0)
	raw, fast := openBothPaths(t, sqlRows)
	people := fixture.People()
	people.UnitKeyed = true
	gen := fixture.Gen{R: r}
	for i := range 150 {
		q := &ir.Query{Table: "people", Where: gen.Pred(2), GroupBy: [][]string{{"sex"}, {"age"}, {"sex", "suburb"}}[i%3]}
		needs := []ir.Needs{{}, {Units: true}, {Key: true}}[i/3%3]
		if i%4 == 3 {
			q.Agg = ir.CountDistinct
		}
		sameOnBothPaths(t, i, raw, fast, people, q, needs, fixture.Secret)
	}
}

// TestSnapshotBoundedOnePerUnit: on a table keyed by its unit, bounded counts
// (Needs.Bound) are the plain ones, so the snapshot answers them, and its
// results, bounds in force included, must equal the bounding SQL's. A single
// NULL unit makes the table one the snapshot leaves to SQLite (those rows
// are not counted under bounds).
func TestSnapshotBoundedOnePerUnit(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 31))
	_, sqlRows := oneRowPerUnit(r, 300, 0)
	raw, fast := openBothPaths(t, sqlRows)
	ctx := context.Background()
	if snap, err := fast.Current(ctx, "people"); err != nil || !snap.OnePerUnit("id") {
		t.Fatalf("the table is not seen as one row per unit (%v)", err)
	}
	people := fixture.People()
	gen := fixture.Gen{R: r}
	for i := range 120 {
		q := &ir.Query{Table: "people", Where: gen.Pred(2)}
		needs := ir.Needs{Bound: true, Units: i%2 == 0, Bounds: ir.Bounds{MaxRowsPerUnit: 1 + int64(i%3), MaxGroupsPerUnit: 1 + int64(i%2)}}
		if i%3 == 1 {
			q.GroupBy = []string{"sex"}
		}
		if i%4 == 3 {
			q.Agg = ir.CountDistinct
		}
		want, werr := raw.Run(ctx, people, q, needs, fixture.Secret)
		got, gerr := fast.Run(ctx, people, q, needs, fixture.Secret)
		withoutPath(want, got)
		if fmt.Sprint(werr) != fmt.Sprint(gerr) || !reflect.DeepEqual(want, got) {
			t.Errorf("query %d %s %+v\nSQLite:   %+v %v\nsnapshot: %+v %v", i, fixture.DebugSQL(people, q), needs.Bounds, want, werr, got, gerr)
		}
	}

	sqlRows[17][0] = nil
	withNull := filepath.Join(t.TempDir(), "null-unit.db")
	fixture.WritePeople(t, withNull, sqlRows)
	_, s := openPaths(t, withNull, plan.StoreOptions{})
	if snap, err := s.Current(ctx, "people"); err != nil || snap.OnePerUnit("id") {
		t.Fatalf("a table with a NULL unit is taken as one row per unit (%v)", err)
	}
}

// TestSnapshotOneConditionTallies checks the per-value path (a COUNT whose
// WHERE is one leaf condition) against SQLite, and that it was taken: 300
// seeded random leaves, negated ones included, under every need, on a table
// declared keyed by its unit and on one where units repeat (where only
// plain counts take it). The secret changes halfway, so the per-value keys
// are recomputed.
func TestSnapshotOneConditionTallies(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 26))
	_, keyed := oneRowPerUnit(r, 300, 0)
	repeated := fixture.SQLRows(fixture.Rows(r, 300))
	people := fixture.People()
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		rows    [][]any
		atLeast int // queries expected to take the path (229 and 60 seen)
	}{{"keyed by unit", keyed, 150}, {"units repeat", repeated, 30}} {
		t.Run(tc.name, func(t *testing.T) {
			declared := *people
			declared.UnitKeyed = tc.name == "keyed by unit"
			people := &declared
			raw, fast := openBothPaths(t, tc.rows)
			gen := fixture.Gen{R: r}
			taken := 0
			for i := range 300 {
				where := gen.Leaf()
				secret := fixture.Secret
				if i >= 150 {
					secret = []byte("another secret for the second half")
				}
				q := &ir.Query{Table: "people", Where: where}
				needs := []ir.Needs{{}, {Units: true}, {Key: true}}[i%3]
				if i%4 == 3 {
					q.Agg = ir.CountDistinct
				}
				sameOnBothPaths(t, i, raw, fast, people, q, needs, secret)
				if ok, err := fast.TalliesPerValue(ctx, people, q, needs, secret); err != nil {
					t.Fatal(err)
				} else if ok {
					taken++
				}
			}
			t.Logf("%d of 300 queries took the per-value path", taken)
			if taken < tc.atLeast {
				t.Errorf("only %d queries took the per-value path, want %d", taken, tc.atLeast)
			}
		})
	}
}

// TestSnapshotRowsInUnitOrder: the snapshot numbers its rows in the order of
// the table's privacy unit, read so from the start; a config naming another
// unit has it read again in that unit's order, and its bounded counts are
// SQLite's bounding SQL's under either unit.
func TestSnapshotRowsInUnitOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(20261124, 1))
	rows := fixture.Rows(r, 400) // ids repeat in no order: about 2.7 rows a unit
	sqlRows := fixture.SQLRows(rows)
	raw, fast := openBothPaths(t, sqlRows)
	ctx := context.Background()
	byID, byAge := fixture.People(), fixture.People()
	byAge.PrivacyUnit = "age"
	if err := fast.Preload(ctx, byID); err != nil {
		t.Fatal(err)
	}
	first, err := fast.Current(ctx, "people")
	if err != nil || first == nil || !first.InUnitOrder("id") {
		t.Fatalf("after Preload the rows are not in the order of id (%v)", err)
	}
	gen := fixture.Gen{R: r}
	answered := 0
	for i, tbl := range []*ir.Table{byID, byID, byAge, byAge, byID, byID} {
		q := &ir.Query{Table: "people", Where: gen.Pred(2)}
		needs := ir.Needs{Bound: true, Units: true, Bounds: ir.Bounds{MaxRowsPerUnit: 2, MaxGroupsPerUnit: 1}}
		want, err := raw.Run(ctx, tbl, q, needs, fixture.Secret)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fast.Run(ctx, tbl, q, needs, fixture.Secret)
		if err != nil {
			t.Fatal(err)
		}
		if got.Path != ir.PathSnapshot {
			continue // a predicate the snapshot leaves to SQLite
		}
		answered++
		withoutPath(want, got)
		if !reflect.DeepEqual(want, got) {
			t.Errorf("query %d under unit %s, %s: SQLite %+v, snapshot %+v", i, tbl.PrivacyUnit, fixture.DebugSQL(tbl, q), want.Cells, got.Cells)
		}
		snap, _ := fast.Current(ctx, "people")
		if !snap.InUnitOrder(tbl.PrivacyUnit) {
			t.Errorf("query %d: the rows are not in the order of %s", i, tbl.PrivacyUnit)
		}
		if (snap == first) != (i < 2) {
			t.Errorf("query %d under unit %s: read again %v, want %v", i, tbl.PrivacyUnit, snap != first, i >= 2)
		}
	}
	if answered < 3 {
		t.Errorf("the snapshot answered %d of 6 queries", answered)
	}
}

// TestSnapshotBoundedEdgeTables: bounded and plain counts, with and without
// GROUP BY, on tables at the edges of the unit order: empty, every unit
// NULL, one unit holding every row (in more cells than a unit's cells are
// looked up one by one), and one row per unit with a NULL among them. The
// snapshot must give SQLite's figures.
func TestSnapshotBoundedEdgeTables(t *testing.T) {
	var oneUnit, nullUnits, mixed [][]any
	for i := range 200 {
		oneUnit = append(oneUnit, []any{7, i % 60, []string{"F", "M"}[i%2], "North", i})
		nullUnits = append(nullUnits, []any{nil, i % 5, "F", "South", i})
		mixed = append(mixed, []any{i, i % 7, "M", "East", i % 3})
	}
	mixed = append(mixed, []any{nil, 3, "F", "East", 1})
	r := rand.New(rand.NewPCG(15, 32))
	gen := fixture.Gen{R: r}
	for _, tc := range []struct {
		name string
		rows [][]any
	}{{"empty", nil}, {"every unit NULL", nullUnits}, {"one unit", oneUnit}, {"one row per unit and a NULL", mixed}} {
		t.Run(tc.name, func(t *testing.T) {
			raw, fast := openBothPaths(t, tc.rows)
			people := fixture.People()
			for i := range 40 {
				q := &ir.Query{Table: "people", Where: gen.Pred(1)}
				if i%4 == 0 {
					q.Where = nil
				}
				if i%2 == 1 {
					q.GroupBy = []string{"age"}
				}
				needs := ir.Needs{Units: i%3 == 0}
				if i%5 < 3 {
					needs.Bound, needs.Bounds = true, ir.Bounds{MaxRowsPerUnit: 1 + int64(i%3)*5, MaxGroupsPerUnit: 1 + int64(i%4)*20}
				}
				sameOnBothPaths(t, i, raw, fast, people, q, needs, fixture.Secret)
			}
		})
	}
}
