package sqlgen

import (
	"countwall/ir"
	"countwall/pgerror"
	"errors"
	"reflect"
	"testing"
)

// TestCompilePostgresExactSQL pins the PostgreSQL rendering: parameters
// numbered and cast to the literal's type, text under the C collation,
// numeric read as a real, other types compared as their text, division by
// zero made NULL, and the per-unit pass for keys and bounds.
func TestCompilePostgresExactSQL(t *testing.T) {
	people := testPeopleTable()
	people.Columns["score"] = &ir.Column{Name: "score", Type: ir.TypeReal}
	people.Columns["born"] = &ir.Column{Name: "born", Type: ir.TypeText}
	d := PostgresDialect{Kinds: map[string]PgKind{
		"id": pgNumber, "age": pgNumber, "income": pgNumber, "sex": pgText, "suburb": pgText,
		"score": pgNumeric, "born": pgOther,
	}}
	cases := []struct {
		name    string
		q       *ir.Query
		needs   ir.Needs
		perUnit bool
		sql     string
		args    []any
	}{
		{
			name: "plain count",
			q:    &ir.Query{Table: "people"},
			sql:  `SELECT COUNT(*) FROM "people"`,
		},
		{
			name: "every literal kind, numbered in order",
			q: &ir.Query{Table: "people", Where: &ir.And{
				Left:  &ir.Compare{Column: "age", Op: "!=", Value: floatLit(30.5)},
				Right: &ir.In{Column: "sex", Values: []ir.Literal{textLit("F"), textLit("M")}, Negate: true},
			}},
			sql:  `SELECT COUNT(*) FROM "people" WHERE (("age" <> $1::float8 AND "sex" COLLATE "C" NOT IN ($2::text, $3::text)))`,
			args: []any{30.5, "F", "M"},
		},
		{
			name: "numeric and other types",
			q: &ir.Query{Table: "people", Where: &ir.Or{
				Left:  &ir.Between{Column: "score", Lo: intLit(1), Hi: intLit(2)},
				Right: &ir.Compare{Column: "born", Op: "<", Value: textLit("2000-01-01")},
			}},
			sql:  `SELECT COUNT(*) FROM "people" WHERE ((("score")::float8 BETWEEN $1::int8 AND $2::int8 OR ("born")::text COLLATE "C" < $3::text))`,
			args: []any{int64(1), int64(2), "2000-01-01"},
		},
		{
			name: "like and math",
			q: &ir.Query{Table: "people", Where: &ir.And{
				Left: &ir.Like{Column: "suburb", Pattern: `a\_%`},
				Right: &ir.MathCompare{Op: ">", Value: intLit(3), Expr: &ir.BinaryExpr{Op: "/", Left: &ir.ColumnRef{Column: "income"},
					Right: &ir.FuncCall{Name: "length", Args: []ir.Expr{&ir.ColumnRef{Column: "sex"}}}},
					Guard: &ir.Between{Column: "income", Lo: intLit(-5), Hi: intLit(5)}},
			}},
			sql: `SELECT COUNT(*) FROM "people" WHERE (("suburb" COLLATE "C" LIKE $1::text ESCAPE '\' AND ` +
				`CASE WHEN "income" BETWEEN $2::int8 AND $3::int8 THEN (("income")::int8 / NULLIF(length(("sex" COLLATE "C")::text), 0)) END > $4::int8))`,
			args: []any{`a\_%`, int64(-5), int64(5), int64(3)},
		},
		{
			name: "math on numeric: double precision, round half to even",
			q: &ir.Query{Table: "people", Where: &ir.MathCompare{Op: "=", Value: floatLit(2),
				Expr:  &ir.FuncCall{Name: "round", Args: []ir.Expr{&ir.BinaryExpr{Op: "+", Left: &ir.ColumnRef{Column: "score"}, Right: &ir.NumberLit{Value: floatLit(0.5)}}}},
				Guard: &ir.Between{Column: "score", Lo: floatLit(-1e308), Hi: floatLit(1e308)}}},
			sql:  `SELECT COUNT(*) FROM "people" WHERE (CASE WHEN ("score")::float8 BETWEEN $1::float8 AND $2::float8 THEN round(((("score")::float8 + $3::float8))::float8) END = $4::float8)`,
			args: []any{-1e308, 1e308, 0.5, 2.0},
		},
		{
			name:  "grouped distinct with units",
			q:     &ir.Query{Table: "people", Agg: ir.CountDistinct, GroupBy: []string{"sex"}},
			needs: ir.Needs{Units: true},
			sql:   `SELECT "sex" COLLATE "C", COUNT(DISTINCT "id"), COUNT(DISTINCT "id") FROM "people" GROUP BY "sex" COLLATE "C"`,
		},
		{
			name:  "one row per unit is a distinct count",
			q:     &ir.Query{Table: "people", GroupBy: []string{"sex"}},
			needs: ir.Needs{Bound: true, Units: true},
			sql:   `SELECT "sex" COLLATE "C", COUNT(DISTINCT "id"), COUNT(DISTINCT "id") FROM "people" GROUP BY "sex" COLLATE "C"`,
		},
		{
			name:    "per-unit pass for bounded counts",
			q:       &ir.Query{Table: "people", GroupBy: []string{"age"}, Where: &ir.Compare{Column: "sex", Op: "=", Value: textLit("F")}},
			needs:   ir.Needs{Bound: true},
			perUnit: true,
			sql:     `SELECT "age", "id", COUNT(*) FROM "people" WHERE "id" IS NOT NULL AND ("sex" COLLATE "C" = $1::text) GROUP BY "age", "id"`,
			args:    []any{"F"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sql, args, err := Postgres(people, tc.q, tc.needs, tc.perUnit, d)
			if err != nil {
				t.Fatal(err)
			}
			if sql != tc.sql {
				t.Errorf("SQL\n got %s\nwant %s", sql, tc.sql)
			}
			if !reflect.DeepEqual(args, tc.args) {
				t.Errorf("args = %#v, want %#v", args, tc.args)
			}
		})
	}
}

// TestCompilePostgresRefusesWhatWouldDiffer: a construct whose PostgreSQL
// meaning differs from SQLite's is refused with 0A000 naming it.
func TestCompilePostgresRefusesWhatWouldDiffer(t *testing.T) {
	people := testPeopleTable()
	people.Columns["score"] = &ir.Column{Name: "score", Type: ir.TypeReal}
	q := &ir.Query{Table: "people", Where: &ir.MathCompare{Op: "=", Value: intLit(0),
		Expr:  &ir.BinaryExpr{Op: "%", Left: &ir.ColumnRef{Column: "score"}, Right: &ir.NumberLit{Value: intLit(2)}},
		Guard: &ir.Between{Column: "score", Lo: floatLit(-1), Hi: floatLit(1)}}}
	_, _, err := Postgres(people, q, ir.Needs{}, false, PostgresDialect{})
	var pe *pgerror.Error
	if !errors.As(err, &pe) || pe.Code != pgerror.FeatureNotSupported {
		t.Fatalf("err = %v, want 0A000", err)
	}
	t.Log(pe.Message)
}
