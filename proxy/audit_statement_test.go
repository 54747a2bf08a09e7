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

// TestAuditRecordsOnlyWhatTheWireSent: the wire sends a withheld count as
// a plain 0, so the audit, and the monitor's decisions read from it, must
// not keep the suppressed mark either. Under bounded and cellkey the mark
// tells a count at or below the suppression threshold from a larger count
// that the noise pulled down to 0, which the analyst never saw; two
// answers that were identical on the wire must be recorded identically.
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
		shape, consts := statementShape(sql, nil)
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

// TestPreparedShapeIsTheStatementShape: the shape an answer's audit row
// takes from the tokens lexed when the statement was prepared is the one
// its text gives (statementShape), for statements the splitting of
// statements or a parameter could make differ; a statement with $n is left
// to its execution's arguments, and an EXPLAIN keeps none.
func TestPreparedShapeIsTheStatementShape(t *testing.T) {
	f := newFixture(t, 5)
	e := f.open(t, "exact", nil)
	s := e.NewSession("alice")
	defer s.Close()
	for _, tc := range []struct {
		sql   string
		known bool
	}{
		{"SELECT COUNT(*) FROM people WHERE age > 3", true},
		{"SELECT COUNT(*) > 17 FROM people WHERE age BETWEEN 3 AND 40 AND sex = 'F';", true},
		{";SELECT COUNT(*) FROM people WHERE suburb = 'it''s' -- c\n;", true},
		{"select /* c */ count(*) from people where \"age\" IN (1, 2, -3.5e2)", true},
		{"SELECT COUNT(*) FROM people WHERE age > $1", false},
		{"EXPLAIN SELECT COUNT(*) FROM people WHERE age > 3", false},
		{"SELECT COUNT(*) FROM people WHERE suburb = 'unterminated", false},
	} {
		st := s.Prepare(tc.sql)
		if st.shape.known != tc.known {
			t.Errorf("%q: shape known %v, want %v", tc.sql, st.shape.known, tc.known)
			continue
		}
		if !tc.known {
			continue
		}
		shape, consts := statementShape(tc.sql, nil)
		if st.shape.text != shape || !reflect.DeepEqual(st.shape.constants, consts) {
			t.Errorf("%q: prepared %q %v, from the text %q %v", tc.sql, st.shape.text, st.shape.constants, shape, consts)
		}
	}
	v := "5"
	st := s.Prepare("SELECT COUNT(*) FROM people WHERE age > $1")
	if got := releasedBy(st, []*string{&v}, nil, nil); got.shape != "select count(*) from people where age > $1" || len(got.constants) != 1 || got.constants[0].Text != "5" {
		t.Errorf("a bound statement released %+v", got)
	}
}
