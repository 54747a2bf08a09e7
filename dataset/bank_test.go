package dataset

import (
	"context"
	"database/sql"
	"path/filepath"
	"reflect"
	"testing"
)

func genBank(t *testing.T, rows int64, seed uint64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bank.db")
	if err := GenerateBank(context.Background(), path, BankOptions{Rows: rows, Seed: seed}, WriteOptions{}); err != nil {
		t.Fatalf("GenerateBank: %v", err)
	}
	return path
}

// A small seeded bank table, pinned: its row count, its columns in order,
// its first rows value by value, every value inside the declared domains,
// and the dump of every row (a change that moves any value must be made
// deliberately, with a new hash).
func TestGenerateBankSmallTable(t *testing.T) {
	const rows = 500
	path := genBank(t, rows, 1)
	db := openReadOnly(t, path)
	table := BankTable()

	wantCols := []string{"id", "age", "job", "marital", "education", "default", "balance", "housing", "loan",
		"contact", "day", "month", "duration", "campaign", "pdays", "previous", "poutcome", "y"}
	if got := table.ColumnNames(); !reflect.DeepEqual(got, wantCols) {
		t.Fatalf("columns %v, want %v", got, wantCols)
	}
	var stored []string
	res, err := db.Query("SELECT name FROM pragma_table_info('bank') ORDER BY cid")
	if err != nil {
		t.Fatal(err)
	}
	for res.Next() {
		var name string
		if err := res.Scan(&name); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, name)
	}
	res.Close()
	if !reflect.DeepEqual(stored, wantCols) {
		t.Errorf("the file's columns %v, want %v", stored, wantCols)
	}
	if quoted := table.QuotedNames(); !reflect.DeepEqual(quoted, []string{`"default"`}) {
		t.Errorf("names to quote %v, want [\"default\"]", quoted)
	}

	var n, minID, maxID int64
	if err := db.QueryRow("SELECT count(*), min(id), max(id) FROM bank").Scan(&n, &minID, &maxID); err != nil {
		t.Fatal(err)
	}
	if n != rows || minID != 1 || maxID != rows {
		t.Fatalf("count, min(id), max(id) = %d, %d, %d; want %d, 1, %d", n, minID, maxID, rows, rows)
	}
	checkDomains(t, db, table, rows)

	first := firstRows(t, db, 3)
	wantFirst := []string{
		"1|49|services|married|secondary|no|588|no|yes|unknown|13|may|104|1|-1|0|unknown|no",
		"2|41|technician|married|secondary|no|464|no|no|cellular|13|feb|108|1|-1|0|unknown|no",
		"3|35|management|married|tertiary|no|928|yes|yes|cellular|8|jan|153|4|177|1|other|no",
	}
	if !reflect.DeepEqual(first, wantFirst) {
		t.Errorf("first rows:\n%q\nwant\n%q", first, wantFirst)
	}
	got, _ := dumpHash(t, path, BankTableName)
	if want := "af196275ec9870d76419f432d70c750f35444124924c39ed472125df9bf9631c"; got != want {
		t.Errorf("bank seed 1, %d rows: dump hash %s, want %s", rows, got, want)
	}
}

// firstRows renders the first n rows, values joined by '|'.
func firstRows(t *testing.T, db *sql.DB, n int) []string {
	t.Helper()
	res, err := db.Query(`SELECT id||'|'||age||'|'||job||'|'||marital||'|'||education||'|'||"default"||'|'||balance||'|'||housing||'|'||
		loan||'|'||contact||'|'||day||'|'||month||'|'||duration||'|'||campaign||'|'||pdays||'|'||previous||'|'||poutcome||'|'||y
		FROM bank ORDER BY id LIMIT ?`, n)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	var out []string
	for res.Next() {
		var s string
		if err := res.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func TestGenerateBankDeterminism(t *testing.T) {
	a, _ := dumpHash(t, genBank(t, 2000, 42), BankTableName)
	b, _ := dumpHash(t, genBank(t, 2000, 42), BankTableName)
	c, _ := dumpHash(t, genBank(t, 2000, 43), BankTableName)
	if a != b {
		t.Errorf("same seed gave different rows: %s vs %s", a, b)
	}
	if a == c {
		t.Errorf("seeds 42 and 43 gave the same rows")
	}
	if err := GenerateBank(context.Background(), filepath.Join(t.TempDir(), "x.db"), BankOptions{Rows: 0}, WriteOptions{}); err == nil {
		t.Error("0 rows: no error")
	}
}

// The shape the package documentation promises, on 45,211 rows of seed 7:
// mixed widths, and the marginals and dependencies of the public data. The
// table is fixed by the seed, so these are exact checks of one table; the
// bounds are wide enough (each rate is a mean of thousands of draws, its
// standard error under 0.005) that a change of seed passes them too.
func TestGenerateBankShape(t *testing.T) {
	db := openReadOnly(t, genBank(t, DefaultBankRows, 7))
	value := func(q string) float64 {
		t.Helper()
		var v float64
		if err := db.QueryRow(q).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	checks := []struct {
		name   string
		query  string
		lo, hi float64
	}{
		{"distinct balances (wide)", "SELECT count(DISTINCT balance) FROM bank", 5000, 10000},
		{"distinct durations (wide)", "SELECT count(DISTINCT duration) FROM bank", 1000, 2000},
		{"distinct pdays", "SELECT count(DISTINCT pdays) FROM bank", 300, 900},
		{"distinct ages", "SELECT count(DISTINCT age) FROM bank", 60, 78},
		{"mean age", "SELECT avg(age) FROM bank", 39, 43},
		{"median-ish balance: share under 450", "SELECT avg(balance < 450) FROM bank", 0.4, 0.6},
		{"share with a balance of 0", "SELECT avg(balance = 0) FROM bank", 0.06, 0.11},
		{"share overdrawn", "SELECT avg(balance < 0) FROM bank", 0.06, 0.11},
		{"share saying yes", "SELECT avg(y = 'yes') FROM bank", 0.10, 0.14},
		{"share never called before", "SELECT avg(pdays = -1) FROM bank", 0.78, 0.86},
		{"never called before iff previous 0", "SELECT avg((pdays = -1) = (previous = 0)) FROM bank", 1, 1},
		{"never called before iff poutcome unknown", "SELECT avg((pdays = -1) = (poutcome = 'unknown')) FROM bank", 1, 1},
		{"share in May", "SELECT avg(month = 'may') FROM bank", 0.28, 0.33},
		{"married", "SELECT avg(marital = 'married') FROM bank", 0.57, 0.65},
		{"retired among the over-60s", "SELECT avg(job = 'retired') FROM bank WHERE age >= 60", 0.65, 0.9},
		{"student among the under-26s", "SELECT avg(job = 'student') FROM bank WHERE age < 26", 0.3, 0.5},
		{"tertiary among managers", "SELECT avg(education = 'tertiary') FROM bank WHERE job = 'management'", 0.8, 0.95},
		{"contact unknown in May and June", "SELECT avg(month IN ('may', 'jun')) FROM bank WHERE contact = 'unknown'", 0.85, 1},
		{"yes after an earlier success", "SELECT avg(y = 'yes') FROM bank WHERE poutcome = 'success'", 0.45, 0.75},
		{"yes on calls over 10 minutes", "SELECT avg(y = 'yes') FROM bank WHERE duration > 600", 0.3, 0.7},
		{"yes on calls under 2 minutes", "SELECT avg(y = 'yes') FROM bank WHERE duration < 120", 0, 0.05},
	}
	for _, c := range checks {
		if v := value(c.query); v < c.lo || v > c.hi {
			t.Errorf("%s: %g, want %g..%g", c.name, v, c.lo, c.hi)
		}
	}
}
