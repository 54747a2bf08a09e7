package proxy

import (
	"context"
	"fmt"
	"strings"

	"countwall/pglex"
	"countwall/proxy/state/release"
	"reflect"
	"testing"
)

// TestAuditRecordsOnlyWhatTheWireSent: the audit, and the monitor's
// decisions read from it, keep a withheld count as the 0 it stands for,
// not the suppressed mark: a 0 with the mark and one without (a count the
// noise pulled down to 0, which bounded and cellkey now mark as well) are
// recorded identically.
func TestAuditRecordsOnlyWhatTheWireSent(t *testing.T) {
	cols := []Column{{Name: "sex", Type: ColumnText}, {Name: "count", Type: ColumnInt8}}
	rows := func() [][]Value { return [][]Value{{{Text: "F"}, {Int: 0}}, {{Text: "M"}, {Int: 7}}} }
	suppressed := &Result{Columns: cols, Rows: rows(), Suppressed: []bool{true, false}, Tag: "SELECT 2"}
	noisedToZero := &Result{Columns: cols, Rows: rows(), Suppressed: []bool{false, false}, Tag: "SELECT 2"}
	a, b := releasedCells(suppressed), releasedCells(noisedToZero)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("the same rows on the wire were recorded as %+v and %+v", a, b)
	}
	if len(a) != 2 || a[0].Value != 0 || a[1].Value != 7 || a[0].Group[0].Text != "F" {
		t.Fatalf("recorded %+v", a)
	}
}

// TestStatementShapeRoundTrip: the statement the audit gives back (its shape
// with the constants put back) reads, token for token, as the statement the
// analyst sent, for statements a normaliser could mishandle: comments of
// both kinds and every line ending, escape and Unicode strings, quotes
// inside strings, non-ASCII names, dollar signs in names, a long IN list.
func TestStatementShapeRoundTrip(t *testing.T) {
	in := "SELECT COUNT(*) FROM people WHERE age IN (" + strings.Repeat("1, ", 199) + "1)"
	for _, sql := range []string{
		"SELECT COUNT(*) FROM people WHERE sex = 'F' -- c\r AND age > 50",
		"select /* a /* nested */ comment */ count(*) from people where suburb = 'it''s'",
		"SELECT COUNT(*) FROM people WHERE suburb = 'Zürich — 東京'",
		`SELECT COUNT(*) FROM people WHERE "Straße" = 'x'`,
		`SELECT COUNT(*) FROM people WHERE "a$1" = 'x' AND b$2 = 3`,
		"SELECT COUNT(*) FROM people WHERE suburb = '$1' AND age >= -1.5e3",
		in,
	} {
		toks, err := pglex.Lex(sql)
		if err != nil {
			t.Fatal(err)
		}
		shape, consts := shapeText(toks, nil, nil)
		back := release.Release{Shape: shape, Constants: consts}.Statement()
		if got, want := tokenTexts(t, back), tokenTexts(t, sql); !reflect.DeepEqual(got, want) {
			t.Errorf("%q\nshape %q\nread back as %q\ngot  %v\nwant %v", sql, shape, back, got, want)
		}
	}
}

// tokenTexts is sql's tokens as the parser reads them: kind and text, a
// name quoted or not alike.
func tokenTexts(t *testing.T, sql string) []string {
	t.Helper()
	toks, err := pglex.Lex(sql)
	if err != nil {
		t.Fatalf("%q: %v", sql, err)
	}
	out := make([]string, len(toks))
	for i, tok := range toks {
		kind := tok.Kind
		if kind == pglex.QuotedIdent {
			kind = pglex.Word // a name that needs no quotes is written without
		}
		out[i] = fmt.Sprintf("%d:%s", kind, tok.Text)
	}
	return out
}

// TestAuditOfAnAnswerWithIntervals: with SET countwall.confidence the
// answer carries ci_low and ci_high after its count; the audit still records
// each row's group values and the count sent, not the interval's bounds.
func TestAuditOfAnAnswerWithIntervals(t *testing.T) {
	f := newFixture(t, 50)
	e := f.open(t, "exact", nil)
	ctx := context.Background()
	s := e.NewSession("alice")
	defer s.Close()
	if _, err := s.Exec(ctx, "SET countwall.confidence = 0.95", nil); err != nil {
		t.Fatal(err)
	}
	grouped, err := s.Exec(ctx, "select sex, count(*) from people where age >= 18 group by sex", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(grouped.Columns) != 4 {
		t.Fatalf("columns %+v, want sex, count, ci_low, ci_high", grouped.Columns)
	}
	e.state.Flush()
	log, err := e.state.AuditLog(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	last := log[len(log)-1]
	if len(last.Cells) != len(grouped.Rows) {
		t.Fatalf("recorded %d cells, sent %d rows", len(last.Cells), len(grouped.Rows))
	}
	for i, row := range grouped.Rows {
		c := last.Cells[i]
		if len(c.Group) != 1 || c.Group[0].Text != row[0].Text || c.IsFloat || c.Value != float64(row[1].Int) {
			t.Errorf("row %d recorded %+v, sent %+v", i, c, row)
		}
	}
}

// TestPreparedShape: the shape an answer's audit row takes from the
// tokens lexed when the statement was prepared, as the audit kept it when
// it lexed the text again at each answer (the texts below are what that
// gave), whether the policy answers them or not; a bound argument is a
// number or a string by the type its parameter was read as (its text once
// decided it: '-5' was a string and 5 for a text column a number), and an
// EXPLAIN keeps none.
func TestPreparedShape(t *testing.T) {
	f := newFixture(t, 5)
	e := f.open(t, "exact", nil)
	s := e.NewSession("alice")
	defer s.Close()
	v5, vm5, vx, v1e2 := "5", " -5 ", "x", "1e2"
	num := func(s string) release.Constant { return release.Constant{Text: s} }
	str := func(s string) release.Constant { return release.Constant{Text: s, String: true} }
	for _, tc := range []struct {
		sql    string
		args   []*string
		shape  string
		consts []release.Constant
	}{
		{"SELECT COUNT(*) FROM people WHERE age > 3", nil, "select count(*) from people where age > $1", []release.Constant{num("3")}},
		{"SELECT COUNT(*) > 17 FROM people WHERE age BETWEEN 3 AND 40 AND sex = 'F';", nil,
			"select count(*) > $1 from people where age between $2 and $3 and sex = $4", []release.Constant{num("17"), num("3"), num("40"), str("F")}},
		{";SELECT COUNT(*) FROM people WHERE suburb = 'it''s' -- c\n;", nil, "; select count(*) from people where suburb = $1", []release.Constant{str("it's")}},
		{"select /* c */ count(*) from people where \"age\" IN (1, 2, -3.5e2)", nil,
			"select count(*) from people where age in ($1, $2, - $3)", []release.Constant{num("1"), num("2"), num("3.5e2")}},
		{`SELECT sex, COUNT(*) FROM "people" WHERE NOT (age < 30.0) AND "Suburb" LIKE 'A%' GROUP BY sex ORDER BY sex DESC`, nil,
			`select sex, count(*) from people where not (age < $1) and "Suburb" like $2 group by sex order by sex desc`, []release.Constant{num("30.0"), str("A%")}},
		{"SELECT COUNT(*) FROM people WHERE abs(age - 40) < 5 OR income IS NOT NULL", nil,
			"select count(*) from people where abs(age - $1) < $2 or income is not null", []release.Constant{num("40"), num("5")}},
		{"SELECT COUNT(*) FROM people WHERE age > $1 AND suburb = $2", []*string{&v5, &vx},
			"select count(*) from people where age > $1 and suburb = $2", []release.Constant{num("5"), str("x")}},
		{"SELECT COUNT(*) FROM people WHERE age > $1 AND suburb = $2", []*string{nil, &v5},
			"select count(*) from people where age > NULL and suburb = $1", []release.Constant{str("5")}},
		{"SELECT COUNT(*) FROM people WHERE age > $1 AND age < 9", []*string{&vm5}, "select count(*) from people where age > $1 and age < $2", []release.Constant{num("-5"), num("9")}},
		{"SELECT COUNT(*) FROM people WHERE age + 1 > $1::float8", []*string{&v1e2}, "", nil}, // refused: casts are not supported
		{"EXPLAIN SELECT COUNT(*) FROM people WHERE age > 3", nil, "", nil},
		{"SELECT COUNT(*) FROM people WHERE suburb = 'unterminated", nil, "", nil},
	} {
		st := s.Prepare(tc.sql)
		_, types, err := st.bind(tc.args)
		got := releasedBy(st, tc.args, types, nil, nil)
		if tc.shape == "" {
			if err == nil && got.shape != "" {
				t.Errorf("%q: answered with the shape %q", tc.sql, got.shape)
			}
			continue
		}
		if got.shape != tc.shape || !reflect.DeepEqual(got.constants, tc.consts) {
			t.Errorf("%q (%v): shape %q %v, want %q %v", tc.sql, err, got.shape, got.constants, tc.shape, tc.consts)
		}
	}
}

func TestPlainDecimal(t *testing.T) {
	for s, want := range map[string]bool{"5": true, "-5": true, "+0.5": true, "1.": true, ".5": true, "1e5": true, "1E-5": true,
		"": false, "-": false, ".": false, "1.2.3": false, "1e": false, "e5": false, "NaN": false, "Infinity": false, "0x1A": false, "1_000": false, "--5": false} {
		if got := plainDecimal(s); got != want {
			t.Errorf("plainDecimal(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestAuditShapeKeepsOrdinals: GROUP BY and ORDER BY positions name
// select-list items, not values, so they stay in the audit's shape as the
// planner keeps them in its own: statements grouped or ordered by other
// positions are other shapes (the risk solvers count repeats by shape),
// each recorded with the group columns it was answered with and read back
// as sent.
func TestAuditShapeKeepsOrdinals(t *testing.T) {
	f := newFixture(t, 20)
	e := f.open(t, "exact", nil)
	ctx := context.Background()
	s := e.NewSession("alice")
	defer s.Close()
	cases := []struct {
		sql, shape string
		consts     int
		groupBy    []string
	}{
		{"SELECT sex, COUNT(*) FROM people WHERE age > 20 GROUP BY 1", "select sex, count(*) from people where age > $1 group by 1", 1, []string{"sex"}},
		{"SELECT COUNT(*), sex FROM people WHERE age > 20 GROUP BY 2", "select count(*), sex from people where age > $1 group by 2", 1, []string{"sex"}},
		{"SELECT sex, age, COUNT(*) FROM people GROUP BY 1, 2 ORDER BY 1", "select sex, age, count(*) from people group by 1, 2 order by 1", 0, []string{"sex", "age"}},
		{"SELECT sex, age, COUNT(*) FROM people GROUP BY 2, 1 ORDER BY 2 DESC, 1", "select sex, age, count(*) from people group by 2, 1 order by 2 desc, 1", 0, []string{"sex", "age"}},
	}
	for _, tc := range cases {
		if _, err := s.Exec(ctx, tc.sql, nil); err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
	}
	e.state.Flush()
	log, err := e.state.AuditLog(ctx, len(cases))
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != len(cases) {
		t.Fatalf("%d audit rows, want %d", len(log), len(cases))
	}
	for i, tc := range cases {
		r := log[i]
		if r.Shape != tc.shape || len(r.Constants) != tc.consts {
			t.Errorf("%s: shape %q %v, want %q with %d constants", tc.sql, r.Shape, r.Constants, tc.shape, tc.consts)
		}
		if r.Query == nil || !reflect.DeepEqual(r.Query.GroupBy, tc.groupBy) {
			t.Errorf("%s: recorded %+v, want GROUP BY %v", tc.sql, r.Query, tc.groupBy)
		}
		if got, want := tokenTexts(t, release.Release{Shape: r.Shape, Constants: r.Constants}.Statement()), tokenTexts(t, tc.sql); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: read back as %q", tc.sql, release.Release{Shape: r.Shape, Constants: r.Constants}.Statement())
		}
	}
}
