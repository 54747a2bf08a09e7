package planner

import (
	"context"
	"countwall/ir"
	"countwall/pgerror"
	"countwall/planner/internal/fixture"
	"countwall/planner/plan"
	"countwall/planner/sqlgen"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// mathCatalog is testCatalog with math allowed and age's declared range
// replaced by [lo, hi] (no range when lo > hi).
func mathCatalog(lo, hi int64) *ir.Catalog {
	cat := testCatalog(func(p *ir.Policy) { p.AllowMath = true })
	age := cat.Tables["people"].Columns["age"]
	age.Domain = nil
	if lo <= hi {
		age.Domain = &ir.Domain{IsRange: true, Min: lo, Max: hi}
	}
	return cat
}

func refusal(t *testing.T, err error) *pgerror.Error {
	t.Helper()
	var pe *pgerror.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error = %v, want a *pgerror.Error", err)
	}
	return pe
}

// TestMathRefusals: each form countwall refuses, with the SQLSTATE
// PostgreSQL gives for it (or 0A000 for what countwall does not compute)
// and a message that says why and what to do. age is declared 0 to 120;
// income and score have no declared range.
func TestMathRefusals(t *testing.T) {
	cat := mathCatalog(0, 120)
	for _, tc := range []struct {
		where   string
		code    pgerror.Code
		message string
	}{
		// the audit's error oracle: refused whatever the rows
		{"abs(age - 5 + -9223372036854775808) > 0", pgerror.NumericValueOutOfRange,
			"age - 5 + -9223372036854775808 could overflow bigint for some value of age in its declared range 0 to 120; change the expression, or narrow tables.people.domains.age"},
		{"abs(income - 5 + -9223372036854775808) > 0", pgerror.NumericValueOutOfRange,
			"income - 5 could overflow bigint for some value of income; declare the column's range in tables.people.domains.income ({min: ..., max: ...})"},
		{"abs(income) > 0", pgerror.NumericValueOutOfRange, "abs(income) could overflow bigint for some value of income; declare"},
		{"income + 1 > 0", pgerror.NumericValueOutOfRange, "income + 1 could overflow bigint"},
		{"income / -1 > 0", pgerror.NumericValueOutOfRange, "income / -1 could overflow bigint"},
		{"age * 76861433640456466 > 0", pgerror.NumericValueOutOfRange, "age * 76861433640456466 could overflow bigint for some value of age in its declared range 0 to 120"},
		{"length(suburb) * 3 > 3", pgerror.NumericValueOutOfRange,
			"length(suburb) * 3 could overflow integer for some value of suburb (a text may hold up to 1073741823 characters); change the expression"},
		{"age + (2147483647 + 1) > 0", pgerror.NumericValueOutOfRange, "(2147483647 + 1) is out of range for type integer"},
		{"score * 2 > 0", pgerror.NumericValueOutOfRange,
			"score * 2 could overflow double precision for some value of score (a real column may hold any finite double precision value); change the expression"},
		{"score + 1e300 > 0", pgerror.NumericValueOutOfRange, "score + 1e300 could overflow double precision"},
		{"score * 0.5 > 0", pgerror.NumericValueOutOfRange,
			"score * 0.5 could underflow double precision for some value of score: PostgreSQL refuses a nonzero product or quotient that rounds to zero"},
		{"score / 2 > 0", pgerror.NumericValueOutOfRange, "score / 2 could underflow double precision"},
		{"score + 0 > 1e400", pgerror.NumericValueOutOfRange, "1e400 is out of range for type double precision (overflow)"},
		{"score + 0 > 1e-400", pgerror.NumericValueOutOfRange, "1e-400 is out of range for type double precision (underflow)"},
		{"score + 2e-324 > 0", pgerror.NumericValueOutOfRange, "2e-324 is out of range for type double precision (underflow)"},
		{"length(suburb) > '3000000000'", pgerror.NumericValueOutOfRange, "'3000000000' is out of range for type integer"},
		// a divisor that can be zero
		{"100 / age > 2", pgerror.DivisionByZero,
			"100 / age could divide by zero: age is zero for some value of age in its declared range 0 to 120; change the expression, or narrow tables.people.domains.age"},
		{"income % (age - 3) = 1", pgerror.FeatureNotSupported, "exactly one column"},
		{"1 / score > 0", pgerror.DivisionByZero, "1 / score could divide by zero: score is zero for some value of score"},
		{"100 / length(suburb) > 2", pgerror.DivisionByZero, "100 / length(suburb) could divide by zero"},
		{"age / 0 > 1", pgerror.DivisionByZero, "division by zero"},
		{"age % 0.0 > 1", pgerror.DivisionByZero, "division by zero"},
		{"score / 0.0 > 1", pgerror.DivisionByZero, "division by zero"},
		{"age / (1 - 1) > 0", pgerror.DivisionByZero, "division by zero"},
		// numeric in PostgreSQL
		{"age * 0.1 = 0.3", pgerror.FeatureNotSupported,
			"age * 0.1 is computed in numeric by PostgreSQL (a decimal constant in arithmetic on an integer); countwall does not compute numeric: use integer constants, and compare the integer expression with a decimal if need be"},
		{"age / 3.0 = 10.33333333333333333333", pgerror.FeatureNotSupported, "age / 3.0 is computed in numeric"},
		{"age % 2.5 = 0", pgerror.FeatureNotSupported, "age % 2.5 is computed in numeric"},
		{"age + 9223372036854775808 > 0", pgerror.FeatureNotSupported, "age + 9223372036854775808 is computed in numeric"},
		{"length(suburb) * 0.1 = 0.3", pgerror.FeatureNotSupported, "length(suburb) * 0.1 is computed in numeric"},
		{"round(age / 2.0) = 20", pgerror.FeatureNotSupported, "age / 2.0 is computed in numeric"},
		{"score * (0.1 + 0.2) > 1", pgerror.FeatureNotSupported, "0.1 + 0.2 is computed in numeric by PostgreSQL; countwall does not compute numeric: write the result as one constant"},
		{"age + round(1.5) > 1", pgerror.FeatureNotSupported, "round(1.5) is computed in numeric"},
		// operators and functions PostgreSQL does not have for the types
		{"score % 2 = 0", pgerror.UndefinedFunction, "operator does not exist: double precision % integer"},
		{"round(age) % 2 = 0", pgerror.UndefinedFunction, "operator does not exist: double precision % integer"},
		{"score % 2.5 = 0", pgerror.UndefinedFunction, "operator does not exist: double precision % numeric"},
		{"length(age) > 1", pgerror.UndefinedFunction, "function length(bigint) does not exist"},
		{"abs(suburb) > 1", pgerror.UndefinedFunction, "function abs(text) does not exist"},
		{"'1' + '2' + age > 1", pgerror.AmbiguousFunction, "operator is not unique: unknown + unknown"},
		{"length('abc') + age > 1", pgerror.FeatureNotSupported, "length of a constant"},
		{"age + 1 > '2.5'", pgerror.InvalidTextRepresentation, "bigint"},
	} {
		t.Run(tc.where, func(t *testing.T) {
			_, err := Parse("SELECT COUNT(*) FROM people WHERE "+tc.where, nil, cat)
			pe := refusal(t, err)
			if pe.Code != tc.code {
				t.Errorf("SQLSTATE %s (%s), want %s", pe.Code, pe.Message, tc.code)
			}
			if !strings.Contains(pe.Message, tc.message) {
				t.Errorf("message\n %q\ndoes not say\n %q", pe.Message, tc.message)
			}
		})
	}
}

// TestMathRendering: the allowed forms as the SQLite and PostgreSQL
// backends receive them: computed only within the checked range (an
// integer column's value must also be stored as an integer in SQLite), a
// real column read as a real, round half to even, integers cast to double
// precision for round, floor and ceil, constants of double precision
// arithmetic cast to double precision, and an integer expression compared
// with a decimal rewritten into the integer comparison that selects the
// same values.
func TestMathRendering(t *testing.T) {
	cat := mathCatalog(0, 120)
	people := cat.Tables["people"]
	kinds := map[string]sqlgen.PgKind{}
	for name, col := range people.Columns {
		dataType := map[ir.ColumnType]string{ir.TypeInt: "bigint", ir.TypeReal: "double precision", ir.TypeText: "text"}[col.Type]
		kinds[name], _ = sqlgen.PgKindOf(dataType)
	}
	const intGuard = `CASE WHEN typeof("age") = 'integer' AND "age" BETWEEN ? AND ? THEN `
	const realGuard = `CASE WHEN "score" BETWEEN ? AND ? THEN `
	maxF := math.MaxFloat64
	for _, tc := range []struct {
		where      string
		sqlite     string
		postgres   string
		args       []any
		guardOnArg bool
	}{
		{"abs(age - 40) < 5",
			intGuard + `abs(("age" - ?)) END < ?`,
			`CASE WHEN "age" BETWEEN $1::int8 AND $2::int8 THEN abs((("age")::int8 - $3::int8)) END < $4::int8`,
			[]any{int64(0), int64(120), int64(40), int64(5)}, false},
		{"round(score) = 2",
			realGuard + `countwall_round_half_even(CAST("score" AS REAL)) END = ?`,
			`CASE WHEN "score" BETWEEN $1::float8 AND $2::float8 THEN round((("score")::float8)::float8) END = $3::float8`,
			[]any{-maxF, maxF, 2.0}, false},
		{"score + 1 > 0.5",
			realGuard + `(CAST("score" AS REAL) + ?) END > ?`,
			`CASE WHEN "score" BETWEEN $1::float8 AND $2::float8 THEN (("score")::float8 + $3::float8) END > $4::float8`,
			[]any{-maxF, maxF, 1.0, 0.5}, false},
		{"floor(age / 2) = 20",
			intGuard + `floor(CAST(("age" / ?) AS REAL)) END = ?`,
			`CASE WHEN "age" BETWEEN $1::int8 AND $2::int8 THEN floor(((("age")::int8 / NULLIF($3::int8, 0)))::float8) END = $4::float8`,
			[]any{int64(0), int64(120), int64(2), 20.0}, false},
		{"age % 7 = 3",
			intGuard + `("age" % ?) END = ?`,
			`CASE WHEN "age" BETWEEN $1::int8 AND $2::int8 THEN (("age")::int8 % NULLIF($3::int8, 0)) END = $4::int8`,
			[]any{int64(0), int64(120), int64(7), int64(3)}, false},
		{"age * 2 > 60.5", intGuard + `("age" * ?) END >= ?`, "", []any{int64(0), int64(120), int64(2), int64(61)}, false},
		{"age * 2 <= 60.5", intGuard + `("age" * ?) END <= ?`, "", []any{int64(0), int64(120), int64(2), int64(60)}, false},
		{"age * 2 = 60.5", intGuard + `("age" * ?) END < ?`, "", []any{int64(0), int64(120), int64(2), int64(math.MinInt64)}, false},
		{"age * 2 <> 60.5", intGuard + `("age" * ?) END >= ?`, "", []any{int64(0), int64(120), int64(2), int64(math.MinInt64)}, false},
		{"age * 2 > 1e30", intGuard + `("age" * ?) END > ?`, "", []any{int64(0), int64(120), int64(2), int64(math.MaxInt64)}, false},
		{"age * 2 = 60.0", intGuard + `("age" * ?) END = ?`, "", []any{int64(0), int64(120), int64(2), int64(60)}, false},
		{"length(suburb) * 2 > 3",
			`(length("suburb") * ?) > ?`,
			`(length(("suburb" COLLATE "C")::text) * $1::int8) > $2::int8`,
			[]any{int64(2), int64(3)}, false},
		{"score * (7 / 7) > 1", realGuard + `(CAST("score" AS REAL) * (? / ?)) END > ?`, "", []any{-maxF, maxF, int64(7), int64(7), 1.0}, false},
	} {
		t.Run(tc.where, func(t *testing.T) {
			st, err := Parse("SELECT COUNT(*) FROM people WHERE "+tc.where, nil, cat)
			if err != nil {
				t.Fatal(err)
			}
			q := st.(*ir.Query)
			text, args, err := sqlgen.SQLite(people, q, ir.Needs{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := `SELECT COUNT(*) FROM "people" WHERE ` + tc.sqlite; text != want {
				t.Errorf("SQLite\n got %s\nwant %s", text, want)
			}
			if !reflect.DeepEqual(args, tc.args) {
				t.Errorf("SQLite arguments %#v, want %#v", args, tc.args)
			}
			if tc.postgres == "" {
				return
			}
			text, args, err = sqlgen.Postgres(people, q, ir.Needs{}, false, sqlgen.PostgresDialect{Kinds: kinds})
			if err != nil {
				t.Fatal(err)
			}
			if want := `SELECT COUNT(*) FROM "people" WHERE (` + tc.postgres + `)`; text != want {
				t.Errorf("PostgreSQL\n got %s\nwant %s", text, want)
			}
			if !reflect.DeepEqual(args, tc.args) {
				t.Errorf("PostgreSQL arguments %#v, want %#v", args, tc.args)
			}
		})
	}
}

// TestMathIntervals: the interval arithmetic of the totality check, an
// expression over age against the range declared for age ("" for none:
// all of bigint): refused with the SQLSTATE given, or answered ("").
func TestMathIntervals(t *testing.T) {
	type declared struct{ lo, hi int64 }
	none := declared{1, 0}
	adult, signed, positive := declared{18, 120}, declared{-100, 100}, declared{1, 1_000_000}
	edge := declared{math.MaxInt64 - 5, math.MaxInt64}
	const ok, over, zero = pgerror.Code(""), pgerror.NumericValueOutOfRange, pgerror.DivisionByZero
	for _, tc := range []struct {
		expr  string
		cases map[declared]pgerror.Code
	}{
		{"age + 1", map[declared]pgerror.Code{none: over, adult: ok, signed: ok, edge: over}},
		{"age - 1", map[declared]pgerror.Code{none: over, adult: ok, edge: ok}},
		{"age + -9223372036854775808", map[declared]pgerror.Code{none: over, adult: ok, signed: over, edge: ok}},
		{"age - 9223372036854775807", map[declared]pgerror.Code{none: over, adult: ok, signed: over, edge: ok}},
		{"age * 2", map[declared]pgerror.Code{none: over, adult: ok, edge: over}},
		{"age * -1", map[declared]pgerror.Code{none: over, adult: ok, signed: ok, edge: ok}},
		{"age * 92233720368547758", map[declared]pgerror.Code{adult: over, signed: ok, positive: over}},
		{"age * 76861433640456465", map[declared]pgerror.Code{adult: ok, signed: ok, positive: over}},
		{"age / 2", map[declared]pgerror.Code{none: ok, adult: ok, edge: ok}},
		{"age / -1", map[declared]pgerror.Code{none: over, signed: ok, edge: ok}},
		{"age % -1", map[declared]pgerror.Code{none: ok, signed: ok}},
		{"age % 7", map[declared]pgerror.Code{none: ok, adult: ok}},
		{"100 / age", map[declared]pgerror.Code{none: zero, adult: ok, signed: zero, positive: ok}},
		{"100 % age", map[declared]pgerror.Code{none: zero, adult: ok, signed: zero}},
		{"100 / (age - 18)", map[declared]pgerror.Code{adult: zero, positive: zero, edge: ok}},
		{"100 / (age % 7)", map[declared]pgerror.Code{adult: zero}},
		{"100 / (age % 7 + 7)", map[declared]pgerror.Code{adult: ok, signed: ok}},
		{"100 / (age % 7 + 6)", map[declared]pgerror.Code{adult: ok, signed: zero}},
		{"abs(age)", map[declared]pgerror.Code{none: over, adult: ok, signed: ok, edge: ok}},
		{"abs(age - 9223372036854775807)", map[declared]pgerror.Code{adult: ok, signed: over, edge: ok}},
		{"abs(age + -9223372036854775807)", map[declared]pgerror.Code{adult: ok, signed: over}},
		{"abs(age / 2)", map[declared]pgerror.Code{none: ok}},
		{"(age - 100) * 3000000000", map[declared]pgerror.Code{adult: ok, positive: ok, edge: over}},
		{"round(age) + 1e300", map[declared]pgerror.Code{none: ok, adult: ok}},
		{"round(age) * 1e300", map[declared]pgerror.Code{none: over, adult: ok}},
		{"round(age) * 1e-300", map[declared]pgerror.Code{adult: ok, signed: ok}},
		{"round(age) / 1e-300", map[declared]pgerror.Code{none: over, adult: ok}},
		{"round(age) * 1e-310", map[declared]pgerror.Code{adult: ok}},
		{"round(age) / 1e300", map[declared]pgerror.Code{adult: ok}},
		{"1 / round(age)", map[declared]pgerror.Code{adult: ok, signed: zero}},
		{"floor(age) * 1e-320 * 1e-10", map[declared]pgerror.Code{adult: over}},
	} {
		for d, want := range tc.cases {
			name := "none"
			if d != none {
				name = fmt.Sprintf("%d..%d", d.lo, d.hi)
			}
			t.Run(tc.expr+"/"+name, func(t *testing.T) {
				_, err := Parse("SELECT COUNT(*) FROM people WHERE "+tc.expr+" > 0", nil, mathCatalog(d.lo, d.hi))
				if got := pgerror.SQLState(err); got != want {
					t.Errorf("SQLSTATE %q (%v), want %q", got, err, want)
				}
			})
		}
	}
}

// mathStoreRows are stored in a table whose declared types SQLite does not
// enforce: age (INTEGER, declared 0 to 120) holds integers in and out of
// the range, a text, a real and bigint's least value; score (REAL) holds
// ties for round, -0, a text and an infinity; num (NUMERIC, a real column
// to countwall) holds whole numbers SQLite keeps as integers.
var mathStoreRows = [][]any{
	{1, int64(30), 2.5, int64(7)},
	{2, int64(120), 3.5, int64(9)},
	{3, int64(-1), -2.5, int64(math.MinInt64)},
	{4, int64(200), 0.5, nil},
	{5, "abc", "abc", "abc"},
	{6, 30.5, math.Copysign(0, -1), 7.5},
	{7, int64(math.MinInt64), math.Inf(1), int64(-9)},
	{8, 1e300, 1.5, int64(math.MaxInt64)},
	{9, nil, nil, nil},
}

// TestMathOnStoredValues runs checked expressions over every storage class
// SQLite lets a declared type hold: a row outside the declared range, or
// holding a value its column's type cannot (a text, a real in an integer
// column, an infinity), computes NULL, never an error; round ties go to
// even; a whole number kept as an integer in a real column divides as a
// real.
func TestMathOnStoredValues(t *testing.T) {
	path := filepath.Join(t.TempDir(), "math.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE m (id INTEGER, age INTEGER, score REAL, num NUMERIC)`); err != nil {
		t.Fatal(err)
	}
	for _, r := range mathStoreRows {
		if _, err := db.Exec(`INSERT INTO m VALUES (?, ?, ?, ?)`, r...); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	store, err := OpenStore(path, plan.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	pol := ir.DefaultPolicy()
	pol.AllowMath = true
	tbl := &ir.Table{Name: "m", PrivacyUnit: "id", Policy: pol, Columns: map[string]*ir.Column{
		"id":    {Name: "id", Type: ir.TypeInt},
		"age":   {Name: "age", Type: ir.TypeInt, Domain: &ir.Domain{IsRange: true, Min: 0, Max: 120}},
		"score": {Name: "score", Type: ir.TypeReal},
		"num":   {Name: "num", Type: ir.TypeReal},
	}}
	cat := &ir.Catalog{Tables: map[string]*ir.Table{"m": tbl}}
	for _, tc := range []struct {
		where string
		want  int64
	}{
		{"abs(age - 9223372036854775807) > 0", 2}, // 30 and 120; -1 would reach abs(-2^63)
		{"age * 76861433640456465 > 0", 2},        // 200 would overflow
		{"age + 0 >= 0", 2},                       // not the text, the real or the rows outside 0..120
		{"age / 4 = 7", 1},                        // 30, by integer division
		{"round(score) = 2", 2},                   // 2.5 and 1.5: half to even
		{"round(score) = 4", 1},                   // 3.5
		{"round(score) = -2", 1},                  // -2.5
		{"round(score) = 0", 2},                   // 0.5 and -0
		{"score + 0 > 1e308", 0},                  // the infinity is outside the range
		{"abs(score) >= 0", 6},                    // every finite number, not the text or the infinity
		{"abs(num) > 9.2e18", 2},                  // bigint's ends kept as integers: doubles, no error
		{"ceil(num) = 8", 1},                      // 7.5
	} {
		t.Run(tc.where, func(t *testing.T) {
			st, err := Parse("SELECT COUNT(*) FROM m WHERE "+tc.where, nil, cat)
			if err != nil {
				t.Fatal(err)
			}
			res, err := store.Run(context.Background(), tbl, st.(*ir.Query), ir.Needs{}, fixture.Secret)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := res.Cells[0].Count; got != tc.want {
				t.Errorf("count %d, want %d", got, tc.want)
			}
		})
	}
}
