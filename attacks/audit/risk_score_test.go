package audit

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"countwall/proxy/risk"
)

// TestScoreMatchesTheTable: the batched, parallel scorer reads, for every
// finding, the count a query on the protected database itself gives (a
// column declared COLLATE NOCASE compares as there), over more findings
// than one batch; a condition SQLite cannot read leaves its finding
// unscored.
func TestScoreMatchesTheTable(t *testing.T) {
	ctx := context.Background()
	path, db := newTruthDB(t)
	rng := rand.New(rand.NewPCG(1, 2))
	var rows []string
	for i := range 400 {
		rows = append(rows, fmt.Sprintf("(%d, '%s', %d)", i, []string{"F", "m"}[rng.IntN(2)], 18+rng.IntN(60)))
	}
	stmts := []string{`CREATE TABLE "people t" (id INTEGER, sex TEXT COLLATE NOCASE, age INTEGER)`,
		`INSERT INTO "people t" VALUES ` + strings.Join(rows, ", ")}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	var fs []risk.Finding
	for i := range 3*scoreBatch + 7 {
		age := 18 + rng.IntN(60)
		cell := []string{fmt.Sprintf("age >= %d", age), fmt.Sprintf("age < %d", age+1+rng.IntN(3))}
		if i%3 == 0 {
			cell = append(cell, "sex = 'M'")
		}
		fs = append(fs, risk.Finding{Pattern: "threshold search", Table: "people t", Cell: cell, Value: float64(rng.IntN(5))})
	}
	fs = append(fs, risk.Finding{Pattern: "exact answer", Table: "people t", Cell: []string{"age ~ 3"}, Value: 1})
	reports := []risk.Report{{Analyst: "rob", Findings: fs}}
	if err := Score(ctx, path, reports); err != nil {
		t.Fatal(err)
	}
	for i, f := range reports[0].Findings {
		if i == len(fs)-1 {
			if f.Truth != nil {
				t.Errorf("%v scored %g, want unscored", f.Cell, *f.Truth)
			}
			continue
		}
		var n float64
		if err := db.QueryRow(`SELECT COUNT(*) FROM "people t" WHERE ` + strings.Join(f.Cell, " AND ")).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if f.Truth == nil || *f.Truth != n || *f.Correct != (n == f.Value) {
			t.Fatalf("%v: scored %v %v, the table says %g (value %g)", f.Cell, f.Truth, f.Correct, n, f.Value)
		}
	}
}

// TestScorersCopyCoveringIndexes: a small table's copy has an index led
// by each column that holds every other column after it, so a finding's
// conditions are read from one index.
func TestScorersCopyCoveringIndexes(t *testing.T) {
	ctx := context.Background()
	path, db := newTruthDB(t)
	if _, err := db.Exec(`CREATE TABLE people (id INTEGER, sex TEXT, age INTEGER); INSERT INTO people VALUES (1, 'F', 30), (2, 'M', 41)`); err != nil {
		t.Fatal(err)
	}
	conn, closeCopy, err := openTruthCopy(ctx, path, []string{"people"})
	if err != nil {
		t.Fatal(err)
	}
	defer closeCopy()
	rows, err := conn.QueryContext(ctx, `SELECT l.name, i.name FROM pragma_index_list('people') AS l, pragma_index_info(l.name) AS i ORDER BY l.name, i.seqno`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string][]string{}
	for rows.Next() {
		var idx, col string
		if err := rows.Scan(&idx, &col); err != nil {
			t.Fatal(err)
		}
		got[idx] = append(got[idx], col)
	}
	want := map[string][]string{
		"score_people_0": {"id", "sex", "age"},
		"score_people_1": {"sex", "id", "age"},
		"score_people_2": {"age", "id", "sex"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("indexes %v, want %v", got, want)
	}
}

// newTruthDB is an empty protected database for the scorer, at its path;
// closed when the test ends.
func newTruthDB(t *testing.T) (string, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "truth.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return path, db
}
