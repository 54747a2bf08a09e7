package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"countwall/pgerror"
)

// mathRow is one row of the math neighbours' table: the declared types
// are SQLite's, which a stored value need not keep.
type mathRow struct {
	id, zip              any
	age, big, score, num any
	name                 any
}

// mathBackground is 300 people in three zips, every column of every type
// its declaration says, far from any edge.
func mathBackground() []mathRow {
	var rows []mathRow
	for p := int64(1); p <= 300; p++ {
		rows = append(rows, mathRow{id: p, zip: 2000 + p%3, age: 20 + p%60, big: p * 1000, score: float64(p) / 4,
			num: p % 50, name: fmt.Sprintf("name_%03d", p)})
	}
	return rows
}

func writeMathTable(t *testing.T, path string, rows []mathRow) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE people (id INTEGER NOT NULL, zip INTEGER, age INTEGER, big INTEGER, score REAL, num NUMERIC, name TEXT)`); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if _, err := db.Exec(`INSERT INTO people VALUES (?, ?, ?, ?, ?, ?, ?)`, r.id, r.zip, r.age, r.big, r.score, r.num, r.name); err != nil {
			t.Fatal(err)
		}
	}
}

func mathEngine(t *testing.T, dir, name, database, domains string) *Engine {
	t.Helper()
	body := fmt.Sprintf(`
database: %s
state: %s
mechanism: {name: laplace}
budget:
  epsilon: {default: 1, min: 0.01, max: 1}
  epsilon_cap: 1000000
tables:
  people:
    privacy_unit: id
    unit_keyed: true
    policy: {allow_math: true}
    domains: {%s}
`, database, filepath.Join(dir, name+"-state.db"), domains)
	cfg := loadConfigText(t, filepath.Join(dir, name+".yaml"), body)
	e, err := Open(context.Background(), cfg, Options{NoiseSeed: 7})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	e.queueAnswerAudit = true
	return e
}

// TestMathNeighbours sends arithmetic conditions under laplace to two
// databases that differ in one person, who holds the value at the edge:
// the one that would make the expression fail (overflow, a zero divisor,
// an underflow), or one outside the declared range, or a value of another
// storage class than the column declares. The statement must be refused in
// both with the same SQLSTATE (decided from the statement and the config
// alone) or answered in both, with answers of the same shape: whether it
// fails never tells whether the person is there.
func TestMathNeighbours(t *testing.T) {
	if testing.Short() {
		t.Skip("scale: every math edge on two neighbouring databases: skipped under -short; go test ./... runs it")
	}
	dir := t.TempDir()
	const newcomer = 9000
	cases := []struct {
		name    string
		domains string
		where   string
		edge    mathRow // the person the first database has and the second has not
		code    pgerror.Code
	}{
		{"the error oracle", "",
			"zip = 2001 AND abs(age - 40 + -9223372036854775808) > 0", mathRow{zip: 2001, age: 40}, pgerror.NumericValueOutOfRange},
		{"the error oracle, age declared", "age: {min: 0, max: 120}",
			"zip = 2001 AND abs(age - 40 + -9223372036854775808) > 0", mathRow{zip: 2001, age: 40}, pgerror.NumericValueOutOfRange},
		{"abs at bigint's least value", "", "abs(big) > 0", mathRow{big: int64(math.MinInt64)}, pgerror.NumericValueOutOfRange},
		{"bigint's greatest value plus one", "", "big + 1 > 0", mathRow{big: int64(math.MaxInt64)}, pgerror.NumericValueOutOfRange},
		{"division by a column at zero", "", "100 / age > 2", mathRow{age: 0}, pgerror.DivisionByZero},
		{"division by a column declared nonzero, a row at zero", "age: {min: 1, max: 120}", "100 / age > 2", mathRow{age: int64(0)}, ""},
		{"a float product that underflows", "", "score * 0.5 > 0", mathRow{score: 5e-324}, pgerror.NumericValueOutOfRange},
		{"a float quotient that overflows", "", "score / 0.5 > 0", mathRow{score: math.MaxFloat64}, pgerror.NumericValueOutOfRange},
		{"abs at bigint's least value, from a row outside the declared range", "big: {min: 0, max: 1000000}",
			"abs(big - 9223372036854775807) > 0", mathRow{big: int64(-1)}, ""},
		{"an overflow from a row outside the declared range", "age: {min: 0, max: 120}",
			"age * 76861433640456465 > 0", mathRow{age: int64(200)}, ""},
		{"a text in an integer column", "big: {min: 0, max: 1000000}", "abs(big - 9223372036854775807) > 0", mathRow{big: "abc"}, ""},
		{"a real in an integer column", "big: {min: 0, max: 1000000}", "big / 2 = 7", mathRow{big: 14.5}, ""},
		{"a huge real in an integer column", "", "big % 7 = 1", mathRow{big: -1e300}, ""},
		{"bigint's least value in a real column", "", "abs(num) > 0", mathRow{num: int64(math.MinInt64)}, ""},
		{"an infinity in a real column", "", "score + 1 > 0", mathRow{score: math.Inf(-1)}, ""},
		{"a text in a real column", "", "round(score) = 2", mathRow{score: "abc"}, ""},
		{"a blob in a text column", "", "length(upper(name)) * 2 > 3", mathRow{name: []byte{0xff, 0}}, ""},
	}
	// The world without the person is the background, one engine per
	// config.
	withoutPath := filepath.Join(dir, "without.db")
	writeMathTable(t, withoutPath, mathBackground())
	without := map[string]*Engine{}
	for _, tc := range cases {
		if without[tc.domains] == nil {
			without[tc.domains] = mathEngine(t, dir, fmt.Sprintf("without-%d", len(without)), withoutPath, tc.domains)
		}
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			edge := tc.edge
			edge.id = int64(newcomer)
			withPath := filepath.Join(dir, fmt.Sprintf("with-%d.db", i))
			writeMathTable(t, withPath, append(mathBackground(), edge))
			engines := [2]*Engine{mathEngine(t, dir, fmt.Sprintf("with-%d", i), withPath, tc.domains), without[tc.domains]}
			sqlText := "SELECT COUNT(*) FROM people WHERE " + tc.where
			var outcomes [2]string
			for w, e := range engines {
				res, err := e.Query(context.Background(), "alice", sqlText)
				code := pgerror.SQLState(err)
				switch {
				case code != tc.code:
					t.Errorf("world %d: SQLSTATE %q (%v), want %q", w, code, err, tc.code)
				case err == nil:
					outcomes[w] = fmt.Sprintf("answered: %d rows of %d columns", len(res.Rows), len(res.Columns))
				default:
					outcomes[w] = "refused: " + string(code) + " " + err.Error()
				}
			}
			if outcomes[0] != outcomes[1] {
				t.Errorf("with the person: %s\nwithout: %s", outcomes[0], outcomes[1])
			}
		})
	}
}
