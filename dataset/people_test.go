package dataset

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"
)

// The canonical dump of a small people table is pinned: a seed must name the
// same table in every release, so a change to the generator that moves any
// value fails here and must be made deliberately (with a new golden hash and
// a note that old seeds now give other tables).
func TestGeneratePeopleGolden(t *testing.T) {
	got, rows := dumpHash(t, genPeople(t, 1000, 1), PeopleTableName)
	if rows != 1000 {
		t.Fatalf("rows = %d, want 1000", rows)
	}
	const want = "12a910c34b5a6810101be0493a44612fcdba21ded4ca22ab2214dbedeec6c321"
	if got != want {
		t.Errorf("people seed 1, 1000 rows: dump hash %s, want %s", got, want)
	}
}

func TestGeneratePeopleDeterminism(t *testing.T) {
	a := genPeople(t, 3000, 42)
	b := genPeople(t, 3000, 42)
	c := genPeople(t, 3000, 43)
	ha, _ := dumpHash(t, a, PeopleTableName)
	hb, _ := dumpHash(t, b, PeopleTableName)
	hc, _ := dumpHash(t, c, PeopleTableName)
	if ha != hb {
		t.Errorf("same seed gave different rows: %s vs %s", ha, hb)
	}
	if fileHash(t, a) != fileHash(t, b) {
		t.Errorf("same seed gave files that differ byte for byte")
	}
	if ha == hc {
		t.Errorf("seeds 42 and 43 gave the same rows")
	}
	// A longer table starts with the shorter one: row i depends on the seed
	// and i only.
	long := genPeople(t, 3500, 42)
	db := openReadOnly(t, long)
	var same int64
	attach := fmt.Sprintf("ATTACH DATABASE 'file:%s?mode=ro' AS short", a)
	if _, err := db.Exec(attach); err != nil {
		t.Fatal(err)
	}
	err := db.QueryRow(`SELECT count(*) FROM people p JOIN short.people s USING (id)
		WHERE p.age = s.age AND p.sex = s.sex AND p.suburb = s.suburb AND p.zip = s.zip AND p.income = s.income
		AND p.education = s.education AND p.marital = s.marital AND p.occupation = s.occupation
		AND p.hours = s.hours AND p.secret = s.secret`).Scan(&same)
	if err != nil {
		t.Fatal(err)
	}
	if same != 3000 {
		t.Errorf("the first 3000 of 3500 rows match the 3000-row table in %d rows, want 3000", same)
	}
}

func TestGeneratePeopleDomains(t *testing.T) {
	const rows = 20_000
	path := genPeople(t, rows, 7)
	db := openReadOnly(t, path)
	table := PeopleTable()

	var n, minID, maxID int64
	if err := db.QueryRow("SELECT count(*), min(id), max(id) FROM people").Scan(&n, &minID, &maxID); err != nil {
		t.Fatal(err)
	}
	if n != rows || minID != 1 || maxID != rows {
		t.Fatalf("count, min(id), max(id) = %d, %d, %d; want %d, 1, %d", n, minID, maxID, rows, rows)
	}
	if len(table.Columns) < 9 {
		t.Fatalf("people has %d columns, want id and at least 8 attributes", len(table.Columns))
	}
	checkDomains(t, db, table, rows)
}

// The dependencies the package documentation promises.
func TestGeneratePeopleStructure(t *testing.T) {
	const rows = 50_000
	db := openReadOnly(t, genPeople(t, rows, 3))
	count := func(where string) int64 {
		t.Helper()
		var n int64
		if err := db.QueryRow("SELECT count(*) FROM people WHERE " + where).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	exact := []struct {
		name, where string
	}{
		{"zip follows suburb", "zip <> 2000 + (CAST(substr(suburb, 8) AS INTEGER) - 1) / 4"},
		{"children are students", "age < 15 AND occupation <> 'student'"},
		{"children earn nothing", "age < 15 AND income <> 0"},
		{"children are never married", "age < 18 AND marital <> 'never_married'"},
		{"under-fives have no schooling", "age < 5 AND education <> 'none'"},
		{"income is in hundreds", "income % 100 <> 0"},
	}
	for _, c := range exact {
		if n := count(c.where); n != 0 {
			t.Errorf("%s: %d rows break it", c.name, n)
		}
	}

	// Statistical shape, n = 50,000. Each bound is at least 6 standard
	// errors from the expected value, so a false failure has probability
	// below 1e-8 per check.
	// The secret bit: P(1) = 0.15 + 0.25*age/100, mean age about 39, so
	// about 0.247 overall (standard error 0.002).
	if f := float64(count("secret = 1")) / rows; math.Abs(f-0.247) > 0.015 {
		t.Errorf("secret share %.4f, want 0.247 +- 0.015", f)
	}
	// It rises with age: 0.15-0.175 under 10, 0.375-0.40 at 90 and over.
	young := float64(count("age < 10 AND secret = 1")) / float64(count("age < 10"))
	if young < 0.13 || young > 0.20 {
		t.Errorf("secret share under 10: %.3f, want 0.15..0.175 within sampling error", young)
	}
	// Suburb popularity follows Zipf: suburb_0001 holds 1/H(1000) = 13.4%.
	if f := float64(count("suburb = 'suburb_0001'")) / rows; math.Abs(f-0.1336) > 0.01 {
		t.Errorf("suburb_0001 share %.4f, want 0.1336 +- 0.01", f)
	}
	// Women: 49.3% under 80, 60% from 80 (3.9% of people): 49.7% overall.
	if f := float64(count("sex = 'F'")) / rows; math.Abs(f-0.497) > 0.015 {
		t.Errorf("female share %.4f, want 0.497 +- 0.015", f)
	}
}

func TestGeneratePeopleRejectsBadRows(t *testing.T) {
	dir := t.TempDir()
	for _, rows := range []int64{0, -5} {
		err := GeneratePeople(context.Background(), filepath.Join(dir, "p.db"), PeopleOptions{Rows: rows}, WriteOptions{})
		if err == nil {
			t.Errorf("rows %d: no error", rows)
		}
	}
	if got := dirEntries(t, dir); len(got) != 0 {
		t.Errorf("files left behind: %v", got)
	}
}

// A long table gives person i 1 to K rows, every row with the person of the
// one-row table of the same seed except hours, drawn per row.
func TestGeneratePeopleLong(t *testing.T) {
	dir := t.TempDir()
	short, long := filepath.Join(dir, "short.db"), filepath.Join(dir, "long.db")
	ctx := context.Background()
	if err := GeneratePeople(ctx, short, PeopleOptions{Rows: 500, Seed: 9}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := GeneratePeople(ctx, long, PeopleOptions{Rows: 500, Seed: 9, MaxRowsPerPerson: 20}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	db := openReadOnly(t, long)
	if _, err := db.Exec(fmt.Sprintf("ATTACH DATABASE 'file:%s?mode=ro' AS short", short)); err != nil {
		t.Fatal(err)
	}
	var people, rows, fewest, most, mismatched int64
	err := db.QueryRow(`SELECT COUNT(*), SUM(n), MIN(n), MAX(n) FROM (SELECT COUNT(*) AS n FROM people GROUP BY id)`).Scan(&people, &rows, &fewest, &most)
	if err != nil {
		t.Fatal(err)
	}
	err = db.QueryRow(`SELECT COUNT(*) FROM people p JOIN short.people s USING (id)
		WHERE NOT (p.age = s.age AND p.sex = s.sex AND p.suburb = s.suburb AND p.zip = s.zip AND p.income = s.income
		AND p.education = s.education AND p.marital = s.marital AND p.occupation = s.occupation AND p.secret = s.secret)`).Scan(&mismatched)
	if err != nil {
		t.Fatal(err)
	}
	// 500 people with 1..20 rows uniformly: mean 10.5, sd of the total about
	// sqrt(500*33.25) = 129; 4,500..6,000 fails with probability below 1e-9.
	if people != 500 || fewest < 1 || most > 20 || rows < 4500 || rows > 6000 || mismatched != 0 {
		t.Errorf("long table: %d people, %d rows (%d to %d a person), %d rows unlike their person", people, rows, fewest, most, mismatched)
	}
	for _, bad := range []int64{-1, 1001} {
		if err := GeneratePeople(ctx, filepath.Join(dir, "bad.db"), PeopleOptions{Rows: 5, MaxRowsPerPerson: bad}, WriteOptions{}); err == nil {
			t.Errorf("rows per person %d: no error", bad)
		}
	}
}
