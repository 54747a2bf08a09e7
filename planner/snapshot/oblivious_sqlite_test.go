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
	"countwall/planner/plan"
	"countwall/planner/sqlgen"
)

// trickyTable writes t(id, n INTEGER, s TEXT) with rows rows of tricky
// values: NULLs, reals between integers, text and blobs in the integer
// column, negative and huge numbers, integers and blobs in the text one.
func trickyTable(t *testing.T, rows int, seed uint64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), fmt.Sprintf("t%d_%d.db", rows, seed))
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE t (id INTEGER, n INTEGER, s TEXT)`); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 99))
	nv := func() any {
		switch k := r.IntN(100); {
		case k < 55:
			return int64(r.IntN(350) - 25)
		case k < 67:
			return float64(r.IntN(350)-25) + 0.5
		case k < 70:
			return []string{"abc", "7", "", "zz"}[r.IntN(4)]
		case k < 73:
			return []byte{byte(r.IntN(2))}
		case k < 75:
			return []any{int64(1) << 40, -(int64(1) << 40), 1e300, -1e300, 256.0}[r.IntN(5)]
		}
		return nil
	}
	sv := func() any {
		switch k := r.IntN(100); {
		case k < 65:
			return fmt.Sprintf("c%03d", r.IntN(320))
		case k < 72:
			return []string{"", "zz", "C001", "c1"}[r.IntN(4)]
		case k < 78:
			return int64(r.IntN(20))
		case k < 80:
			return []byte("c005")
		}
		return nil
	}
	tx, _ := db.Begin()
	for i := range rows {
		if _, err := tx.Exec(`INSERT INTO t VALUES (?, ?, ?)`, i, nv(), sv()); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return path
}

func shuffledCategories(r *rand.Rand, n int, extra ...string) []string {
	out := append([]string(nil), extra...)
	for range n {
		out = append(out, fmt.Sprintf("c%03d", r.IntN(330)))
	}
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// trickyGen makes seeded conditions on n and s whose literals land on
// domain values, between them, outside them, and of the other kind.
type trickyGen struct{ r *rand.Rand }

func (g trickyGen) lit(col string) ir.Literal {
	if (col == "n") != (g.r.IntN(12) == 0) {
		if g.r.IntN(6) == 0 {
			return ir.Literal{Kind: ir.LitFloat, Float: float64(g.r.IntN(360)-30) + 0.5}
		}
		return ir.Literal{Kind: ir.LitInt, Int: int64(g.r.IntN(360) - 30)}
	}
	if g.r.IntN(5) == 0 {
		return ir.Literal{Kind: ir.LitText, Text: []string{"", "zz", "c1", "abc", "c999", "7"}[g.r.IntN(6)]}
	}
	return ir.Literal{Kind: ir.LitText, Text: fmt.Sprintf("c%03d", g.r.IntN(335))}
}

func (g trickyGen) leaf() ir.Pred {
	col := []string{"n", "s"}[g.r.IntN(2)]
	switch g.r.IntN(6) {
	case 0, 1:
		return &ir.Compare{Column: col, Op: []string{"=", "<>", "!=", "<", "<=", ">", ">="}[g.r.IntN(7)], Value: g.lit(col)}
	case 2:
		return &ir.Between{Column: col, Lo: g.lit(col), Hi: g.lit(col), Negate: g.r.IntN(2) == 0}
	case 3:
		vals := make([]ir.Literal, 1+g.r.IntN(5))
		for i := range vals {
			if i > 0 && g.r.IntN(3) == 0 {
				vals[i] = vals[g.r.IntN(i)] // repeated
			} else {
				vals[i] = g.lit(col)
			}
		}
		return &ir.In{Column: col, Values: vals, Negate: g.r.IntN(2) == 0}
	case 4:
		return &ir.IsNull{Column: col, Negate: g.r.IntN(2) == 0}
	}
	return &ir.Like{Column: col, Pattern: []string{"c0%", "%", "_", "7"}[g.r.IntN(4)], Negate: g.r.IntN(2) == 0}
}

func (g trickyGen) pred(depth int) ir.Pred {
	if depth > 0 && g.r.IntN(2) == 0 {
		switch g.r.IntN(3) {
		case 0:
			return &ir.And{Left: g.pred(depth - 1), Right: g.pred(depth - 1)}
		case 1:
			return &ir.Or{Left: g.pred(depth - 1), Right: g.pred(depth - 1)}
		}
		return &ir.Not{Inner: g.pred(depth - 1)}
	}
	return g.leaf()
}

type trickyDomains struct {
	name string
	n, s *ir.Domain
}

func trickyDomainSets() []trickyDomains {
	r := rand.New(rand.NewPCG(4, 4))
	return []trickyDomains{
		{"none", nil, nil},
		{"planes", &ir.Domain{IsRange: true, Min: 0, Max: 9}, &ir.Domain{Categories: []string{"c010", "c002", "c002", "zz", "", "c300"}}},
		{"ranks", &ir.Domain{IsRange: true, Min: -5, Max: 300}, &ir.Domain{Categories: shuffledCategories(r, 400, "", "zz", "c999")}},
		{"257 values", &ir.Domain{IsRange: true, Min: 0, Max: 256}, &ir.Domain{Categories: shuffledCategories(r, 257)}},
		{"one value", &ir.Domain{IsRange: true, Min: 7, Max: 7}, &ir.Domain{Categories: []string{"c007"}}},
		{"int range on text", &ir.Domain{IsRange: true, Min: 0, Max: 300}, &ir.Domain{IsRange: true, Min: 0, Max: 300}},
		{"narrow int range on text", &ir.Domain{IsRange: true, Min: -3, Max: 3}, &ir.Domain{IsRange: true, Min: 0, Max: 9}},
		{"huge range", &ir.Domain{IsRange: true, Min: -1_000_000, Max: 1_000_000}, &ir.Domain{Categories: shuffledCategories(r, 3)}},
		{"too wide", &ir.Domain{IsRange: true, Min: 0, Max: 5_000_000}, nil},
	}
}

func trickyIRTable(d trickyDomains) *ir.Table {
	return &ir.Table{Name: "t", PrivacyUnit: "id", Policy: ir.DefaultPolicy(), Columns: map[string]*ir.Column{
		"id": {Name: "id", Type: ir.TypeInt},
		"n":  {Name: "n", Type: ir.TypeInt, Domain: d.n},
		"s":  {Name: "s", Type: ir.TypeText, Domain: d.s},
	}}
}

// sqliteCount is q's COUNT(*) as SQLite answers it.
func sqliteCount(t *testing.T, db *sql.DB, tbl *ir.Table, where ir.Pred) int64 {
	t.Helper()
	text, args, err := sqlgen.SQLite(tbl, &ir.Query{Table: tbl.Name, Where: where}, ir.Needs{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := db.QueryRowContext(context.Background(), text, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return n
}

// TestObliviousTrickyValuesAgreeWithSQLite: the oblivious evaluation's rows
// equal the data's way's and SQLite's count, over table sizes at the
// block boundaries and domains of every kind; and its work is the same on
// a second table of the same size and code widths.
func TestObliviousTrickyValuesAgreeWithSQLite(t *testing.T) {
	sizes := []int{0, 1, 63, 64, 65, 1000, rankBlock*64 + 1}
	if testing.Short() {
		sizes = sizes[:5]
	}
	for _, rows := range sizes {
		pathA, pathB := trickyTable(t, rows, 1), trickyTable(t, rows, 2)
		db, err := sql.Open("sqlite", plan.ReadOnlyDSN(pathA, plan.StoreOptions{}))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, ds := range trickyDomainSets() {
			t.Run(fmt.Sprintf("%d rows, %s", rows, ds.name), func(t *testing.T) {
				a, b := readFile(t, pathA, "t", "id"), readFile(t, pathB, "t", "id")
				sameWidths := true
				for _, col := range []string{"n", "s"} {
					ca, cb := a.columns[col], b.columns[col]
					sameWidths = sameWidths && (ca.codes8 == nil) == (cb.codes8 == nil) && (ca.codes16 == nil) == (cb.codes16 == nil)
				}
				tbl := trickyIRTable(ds)
				g := trickyGen{rand.New(rand.NewPCG(uint64(rows), 7))}
				for i := range 250 {
					p := g.pred(2)
					q := &ir.Query{Table: "t", Where: p}
					e, eb, byData := newSnapEval(a, tbl, ir.Needs{Oblivious: true}), newSnapEval(b, tbl, ir.Needs{Oblivious: true}), newSnapEval(a, tbl, ir.Needs{})
					got, ok := e.matched(q)
					want, wantOK := byData.matched(q)
					_, okB := eb.matched(q)
					if (ok != wantOK && rows > 0) || ok != okB { // the data's way answers any WHERE on no rows
						t.Fatalf("statement %d %s: evaluated %v, by the data %v, other table %v", i, sqlOf(tbl, p), ok, wantOK, okB)
					}
					if ok && wantOK {
						if fmt.Sprint(got) != fmt.Sprint(want) {
							t.Errorf("statement %d %s: %d rows, by the data %d", i, sqlOf(tbl, p), got.count(), want.count())
						} else if n := sqliteCount(t, db, tbl, p); n != int64(got.count()) {
							t.Errorf("statement %d %s: %d rows, SQLite %d", i, sqlOf(tbl, p), got.count(), n)
						}
						if sameWidths && e.work != eb.work {
							t.Errorf("statement %d %s: work %+v, on another table %+v", i, sqlOf(tbl, p), e.work, eb.work)
						}
					}
					e.release()
					eb.release()
					byData.release()
				}
			})
		}
	}
}

func sqlOf(tbl *ir.Table, p ir.Pred) string {
	text, args, _ := sqlgen.SQLite(tbl, &ir.Query{Table: tbl.Name, Where: p}, ir.Needs{}, nil)
	return fmt.Sprint(text, args)
}

// TestObliviousCodeWidthBoundaries: columns whose dictionaries are 256, 257,
// 65,536 and 65,537 entries (NULL among them or not) answer as the data's
// way and SQLite do, with the same work on a neighbouring table.
func TestObliviousCodeWidthBoundaries(t *testing.T) {
	if testing.Short() {
		t.Skip("70,001 rows")
	}
	const rows = 70_001
	write := func(extra string) string {
		path := filepath.Join(t.TempDir(), "w.db")
		fixture.WriteSQL(t, path,
			`CREATE TABLE t (id INTEGER, a INTEGER, b INTEGER, c INTEGER, d INTEGER, e INTEGER)`,
			fmt.Sprintf(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < %d)
			 INSERT INTO t SELECT i, (i * 7) %% 256, CASE WHEN i %% 300 = 0 THEN NULL ELSE i %% 255 END,
			   CASE WHEN i %% 5 = 0 THEN (i %% 257) + 0.5 ELSE i %% 257 END,
			   (i * 13) %% 65536, CASE WHEN i %% 65537 = 1 THEN NULL ELSE (i * 13) %% 65536 END FROM n`, rows-1),
			extra)
		return path
	}
	pathA, pathB := write(`SELECT 1`), write(`UPDATE t SET a = 3, b = NULL, c = 2.5, d = 1, e = 7 WHERE id = 4242`)
	a, b := readFile(t, pathA, "t", "id"), readFile(t, pathB, "t", "id")
	for _, tc := range []struct {
		col    string
		values int
		width  int
	}{{"a", 256, 8}, {"b", 256, 8}, {"c", 514, 16}, {"d", 65536, 16}, {"e", 65537, 32}} {
		c := a.columns[tc.col]
		w := 32
		if c.codes8 != nil {
			w = 8
		} else if c.codes16 != nil {
			w = 16
		}
		if len(c.values) != tc.values || w != tc.width {
			t.Fatalf("%s: %d values, %d-bit codes; want %d, %d", tc.col, len(c.values), w, tc.values, tc.width)
		}
	}
	tbl := &ir.Table{Name: "t", PrivacyUnit: "id", Policy: ir.DefaultPolicy(), Columns: map[string]*ir.Column{"id": {Name: "id", Type: ir.TypeInt}}}
	for _, col := range []string{"a", "b", "c", "d", "e"} {
		tbl.Columns[col] = &ir.Column{Name: col, Type: ir.TypeInt}
	}
	db, err := sql.Open("sqlite", plan.ReadOnlyDSN(pathA, plan.StoreOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r := rand.New(rand.NewPCG(8, 8))
	lit := func(max int) ir.Literal {
		if r.IntN(8) == 0 {
			return ir.Literal{Kind: ir.LitFloat, Float: float64(r.IntN(max+10)-5) + 0.5}
		}
		return ir.Literal{Kind: ir.LitInt, Int: int64(r.IntN(max+10) - 5)}
	}
	ops := []string{"=", "<>", "<", "<=", ">", ">="}
	for i := range 400 {
		col := []string{"a", "b", "c", "d", "e"}[i%5]
		max := map[string]int{"a": 256, "b": 256, "c": 257, "d": 65536, "e": 65536}[col]
		var p ir.Pred
		switch r.IntN(3) {
		case 0:
			p = &ir.Compare{Column: col, Op: ops[r.IntN(len(ops))], Value: lit(max)}
		case 1:
			p = &ir.Between{Column: col, Lo: lit(max), Hi: lit(max), Negate: r.IntN(2) == 0}
		default:
			vals := make([]ir.Literal, 1+r.IntN(10))
			for k := range vals {
				vals[k] = lit(max)
			}
			p = &ir.In{Column: col, Values: vals, Negate: r.IntN(2) == 0}
		}
		if r.IntN(3) == 0 {
			p = &ir.Not{Inner: p}
		}
		q := &ir.Query{Table: "t", Where: p}
		e, eb, byData := newSnapEval(a, tbl, ir.Needs{Oblivious: true}), newSnapEval(b, tbl, ir.Needs{Oblivious: true}), newSnapEval(a, tbl, ir.Needs{})
		got, ok := e.matched(q)
		want, _ := byData.matched(q)
		eb.matched(q)
		if !ok {
			t.Fatalf("%s: not evaluated", sqlOf(tbl, p))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %d rows, by the data %d", sqlOf(tbl, p), got.count(), want.count())
		} else if n := sqliteCount(t, db, tbl, p); n != int64(got.count()) {
			t.Errorf("%s: %d rows, SQLite %d", sqlOf(tbl, p), got.count(), n)
		}
		if e.work != eb.work {
			t.Errorf("%s: work %+v, on the neighbour %+v", sqlOf(tbl, p), e.work, eb.work)
		}
		e.release()
		eb.release()
		byData.release()
	}
}
