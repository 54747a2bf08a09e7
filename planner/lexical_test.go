package planner

import (
	"context"
	"countwall/ir"
	"countwall/pgerror"
	"countwall/planner/internal/fixture"
	"countwall/planner/plan"
	"reflect"
	"strings"
	"testing"
)

// lexCatalog is the people table plus columns named by a reserved word
// (default), a MySQL-only keyword (status) and one needing quotes for its
// upper case in PostgreSQL's reading (none: catalog names are lower case).
func lexCatalog() *ir.Catalog {
	cat := testCatalog(nil)
	cols := cat.Tables["people"].Columns
	cols["default"] = &ir.Column{Name: "default", Type: ir.TypeText}
	cols["status"] = &ir.Column{Name: "status", Type: ir.TypeText}
	return cat
}

// TestPostgresLexicalRules: statements are read as PostgreSQL reads them.
func TestPostgresLexicalRules(t *testing.T) {
	eq := func(col, v string) ir.Pred { return &ir.Compare{Column: col, Op: "=", Value: fixture.TextLit(v)} }
	tests := []struct {
		name, sql string
		where     ir.Pred
	}{
		{"backslash before the closing quote: the hostile interpolation",
			`SELECT COUNT(*) FROM people WHERE sex = 'F\' AND suburb = ' OR age >= 0 --'`,
			&ir.And{Left: eq("sex", `F\`), Right: eq("suburb", " OR age >= 0 --")}},
		{"backslash underscore is two characters", `SELECT COUNT(*) FROM people WHERE suburb = 'suburb\_0007'`, eq("suburb", `suburb\_0007`)},
		{"string ending in a backslash", `SELECT COUNT(*) FROM people WHERE suburb = 'x\\'`, eq("suburb", `x\\`)},
		{"doubled quote", `SELECT COUNT(*) FROM people WHERE suburb = 'O''Hara'`, eq("suburb", "O'Hara")},
		{"comment marks in a string", `SELECT COUNT(*) FROM people WHERE suburb = '/* -- # */'`, eq("suburb", "/* -- # */")},
		{"string in a comment", "SELECT COUNT(*) FROM people /* WHERE suburb = 'x' */ WHERE sex = 'F'", eq("sex", "F")},
		{"nested comment", "SELECT COUNT(*) FROM people /* a /* b */ WHERE suburb = 'x' */ WHERE sex = 'F'", eq("sex", "F")},
		{"versioned comment is only a comment", "SELECT COUNT(*) FROM people /*! WHERE suburb = 'x' */", nil},
		{"line comment at the end", "SELECT COUNT(*) FROM people WHERE sex = 'F' -- AND suburb = 'x'", eq("sex", "F")},
		{"quoted table", `SELECT COUNT(*) FROM "people" WHERE sex = 'F'`, eq("sex", "F")},
		{"quoted column", `SELECT COUNT(*) FROM people WHERE "sex" = 'F'`, eq("sex", "F")},
		{"reserved word quoted", `SELECT COUNT(*) FROM people WHERE "default" = 'no'`, eq("default", "no")},
		{"MySQL keyword is a column", `SELECT COUNT(*) FROM people WHERE status = 'no'`, eq("status", "no")},
		{"upper case folds", `SELECT COUNT(*) FROM PEOPLE WHERE SEX = 'F'`, eq("sex", "F")},
		{"continued string", "SELECT COUNT(*) FROM people WHERE suburb = 'Nor'\n'th'", eq("suburb", "North")},
		{"double quote inside a string", `SELECT COUNT(*) FROM people WHERE suburb = 'say "hi"'`, eq("suburb", `say "hi"`)},
		{"backquote inside a string", "SELECT COUNT(*) FROM people WHERE suburb = 'a`b'", eq("suburb", "a`b")},
	}
	cat := lexCatalog()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := Parse(tc.sql, nil, cat)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.sql, err)
			}
			q := st.(*ir.Query)
			if !reflect.DeepEqual(q.Where, tc.where) {
				t.Errorf("Parse(%q).Where = %#v, want %#v", tc.sql, q.Where, tc.where)
			}
		})
	}
}

func TestPostgresLexicalRefusals(t *testing.T) {
	deepNot := "SELECT COUNT(*) FROM people WHERE " + strings.Repeat("NOT ", 1000) + "age = 1"
	tests := []struct {
		name, sql string
		code      pgerror.Code
		message   string
	}{
		{"reserved word unquoted", `SELECT COUNT(*) FROM people WHERE default = 'no'`, pgerror.SyntaxError, `syntax error at or near "default"`},
		{"double-quoted value is a column", `SELECT COUNT(*) FROM people WHERE sex = "F"`, pgerror.UndefinedColumn, `column "F" does not exist in table "people"`},
		{"quoted name keeps its case", `SELECT COUNT(*) FROM people WHERE "Sex" = 'F'`, pgerror.UndefinedColumn, `column "Sex" does not exist in table "people"`},
		{"quoted table keeps its case", `SELECT COUNT(*) FROM "People"`, pgerror.UndefinedTable, `relation "People" does not exist`},
		{"backquotes", "SELECT COUNT(*) FROM `people`", pgerror.SyntaxError, "syntax error at or near \"`\""},
		{"hash", "SELECT COUNT(*) FROM people # WHERE sex = 'F'", pgerror.SyntaxError, `syntax error at or near "#"`},
		{"escape string", `SELECT COUNT(*) FROM people WHERE suburb = E'x\'`, pgerror.FeatureNotSupported, "E'...' escape strings are not supported"},
		{"dollar quoting", `SELECT COUNT(*) FROM people WHERE suburb = $$x$$`, pgerror.FeatureNotSupported, "dollar-quoted strings ($$...$$, $tag$...$tag$) are not supported"},
		{"unicode identifier", `SELECT COUNT(*) FROM people WHERE U&"sex" = 'F'`, pgerror.FeatureNotSupported, "U&'...' and U&\"...\" Unicode escapes are not supported"},
		{"stops at a word", `SELECT COUNT(*) FROM people WHERE age = 1 sex = 'F'`, pgerror.SyntaxError, `syntax error at or near "sex"`},
		{"reserved word at the end", `SELECT COUNT(*) FROM people WHERE age = 1 AND table`, pgerror.SyntaxError, `syntax error at or near "table"`},
		{"ILIKE", `SELECT COUNT(*) FROM people WHERE suburb ILIKE 'n%'`, pgerror.FeatureNotSupported, "ILIKE is not supported"},
		{"FOR UPDATE", `SELECT COUNT(*) FROM people FOR UPDATE`, pgerror.FeatureNotSupported, "locking clauses are not supported"},
		{"FOR NO KEY UPDATE", `SELECT COUNT(*) FROM people FOR NO KEY UPDATE`, pgerror.FeatureNotSupported, "locking clauses are not supported"},
		{"stops at end", `SELECT COUNT(*) FROM people WHERE age = 1 AND`, pgerror.SyntaxError, "syntax error at end of input"},
		{"not a statement", `SELEKT COUNT(*) FROM people`, pgerror.SyntaxError, `syntax error at or near "SELEKT"`},
		{"string first: named by its kind, not its value", `'Zanzibar'`, pgerror.SyntaxError, "syntax error at or near a string constant"},
		{"stops at a string", `SELECT COUNT(*) FROM people WHERE suburb 'Zanzibar'`, pgerror.SyntaxError, "syntax error at or near a string constant"},
		{"stops at a number", `SELECT COUNT(*) FROM people WHERE age 4242`, pgerror.SyntaxError, "syntax error at or near a number"},
		{"MySQL OR operator", `SELECT COUNT(*) FROM people WHERE sex = 'F' || age = 3`, pgerror.FeatureNotSupported, "operator || is not supported"},
		{"MySQL null-safe equality", `SELECT COUNT(*) FROM people WHERE sex <=> 'F'`, pgerror.FeatureNotSupported, "operator <=> is not supported"},
		{"MySQL placeholder", `SELECT COUNT(*) FROM people WHERE age = ?`, pgerror.FeatureNotSupported, "operator ? is not supported"},
		{"MySQL bind variable", `SELECT COUNT(*) FROM people WHERE age = :v1`, pgerror.SyntaxError, `syntax error at or near ":"`},
		{"MySQL div is a name", `SELECT COUNT(*) FROM people WHERE age div 2 = 1`, pgerror.SyntaxError, `syntax error at or near "div"`},
		{"cast of a column to text", `SELECT COUNT(*) FROM people WHERE age::text = '1'`, pgerror.FeatureNotSupported, "CAST(age AS text) is not supported in a condition"},
		{"two statements", `SELECT COUNT(*) FROM people; SELECT COUNT(*) FROM people`, pgerror.SyntaxError, "several statements"},
		{"semicolon in a string is no second statement", `SELECT COUNT(*) FROM people WHERE suburb = ';' ; DROP TABLE people`, pgerror.SyntaxError, "several statements"},
		{"1000 nested NOTs", deepNot, pgerror.ProgramLimitExceeded, "more than 200 deep"},
		{"NaN for an integer", `SELECT COUNT(*) FROM people WHERE age = 'NaN'`, pgerror.InvalidTextRepresentation, `bigint`},
		{"Infinity for an integer", `SELECT COUNT(*) FROM people WHERE age < 'Infinity'`, pgerror.InvalidTextRepresentation, `bigint`},
		{"hexadecimal float text", `SELECT COUNT(*) FROM people WHERE age < '0x1p-3'`, pgerror.InvalidTextRepresentation, `bigint`},
		{"SET epsilon hexadecimal", `SET epsilon = '0x1p-3'`, pgerror.InvalidParameterValue, "decimal or exponent form"},
		{"SET epsilon separator", `SET epsilon = '1_0'`, pgerror.InvalidParameterValue, "decimal or exponent form"},
		{"SET epsilon NaN", `SET epsilon = 'NaN'`, pgerror.InvalidParameterValue, "decimal or exponent form"},
		{"SET delta Infinity", `SET delta TO 'Infinity'`, pgerror.InvalidParameterValue, "decimal or exponent form"},
	}
	cat := lexCatalog()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.sql, nil, cat)
			if got := pgerror.SQLState(err); got != tc.code {
				t.Fatalf("Parse(%q) = %v (SQLSTATE %q), want %s", tc.sql, err, got, tc.code)
			}
			if err.Error() != tc.message && !strings.Contains(err.Error(), tc.message) {
				t.Errorf("Parse(%q) error %q, want it to say %q", tc.sql, err, tc.message)
			}
		})
	}
}

func TestReservedWordHint(t *testing.T) {
	_, err := Parse(`SELECT COUNT(*) FROM people WHERE default = 'no'`, nil, lexCatalog())
	pe, ok := err.(*pgerror.Error)
	if !ok || !strings.Contains(pe.Hint, `"default"`) {
		t.Fatalf("error %#v: want a hint showing \"default\"", err)
	}
}

// TestNonFiniteParameters: PostgreSQL's bigint input refuses NaN and the
// infinities (22P02); its double precision input reads them, and a real
// column compares with them (TestNullHeavyCountsOnEveryBackend counts).
func TestNonFiniteParameters(t *testing.T) {
	for _, v := range []string{"NaN", "nan", "Infinity", "-Infinity", "+Inf", "-nan", "nan(1)"} {
		for _, col := range []string{"age", "score"} {
			var want pgerror.Code
			if col == "age" {
				want = pgerror.InvalidTextRepresentation
			}
			_, err := Parse("SELECT COUNT(*) FROM people WHERE "+col+" < $1", []*string{str(v)}, testCatalog(nil))
			if got := pgerror.SQLState(err); got != want {
				t.Errorf("%s < $1 bound to %q: %v (SQLSTATE %q), want %q", col, v, err, got, want)
			}
		}
	}
}

func TestSetValues(t *testing.T) {
	tests := []struct {
		sql  string
		want ir.Set
	}{
		{"SET epsilon = 0.5", ir.Set{Name: "epsilon", Value: "0.5"}},
		{"set EPSILON to '1e-3'", ir.Set{Name: "epsilon", Value: "1e-3"}},
		{"SET delta = 1E-6;", ir.Set{Name: "delta", Value: "1E-6"}},
		{"SET SESSION extra_float_digits = 3", ir.Set{Name: "extra_float_digits", Value: "3"}},
		{"SET extra_float_digits = -1", ir.Set{Name: "extra_float_digits", Value: "-1"}},
		{"SET DateStyle = 'ISO, MDY'", ir.Set{Name: "datestyle", Value: "ISO, MDY"}},
		{"SET datestyle TO ISO, MDY", ir.Set{Name: "datestyle", Value: "ISO, MDY"}},
		{"SET application_name = 'it''s -- mine'", ir.Set{Name: "application_name", Value: "it's -- mine"}},
		{"SET TIME ZONE 'UTC'", ir.Set{Name: "timezone", Value: "UTC"}},
		{"SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY", ir.Set{Name: "characteristics", Value: "AS TRANSACTION READ ONLY"}},
		{"SET search_path TO \"$user\", public", ir.Set{Name: "search_path", Value: "$user, public"}},
	}
	for _, tc := range tests {
		st, err := Parse(tc.sql, nil, testCatalog(nil))
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.sql, err)
			continue
		}
		if got, ok := st.(*ir.Set); !ok || *got != tc.want {
			t.Errorf("Parse(%q) = %#v, want %#v", tc.sql, st, tc.want)
		}
	}
}

// TestNestingWithinSQLite: conditions nested just under the limit run in
// SQLite (whose own limit is an expression depth of 1000).
func TestNestingWithinSQLite(t *testing.T) {
	s, _ := openTestStore(t, plan.StoreOptions{})
	cat := &ir.Catalog{Tables: map[string]*ir.Table{"people": fixture.People()}}
	// An even number of NOTs: the answer is the count of age = 30.
	n := MaxNesting - 2
	sql := "SELECT COUNT(*) FROM people WHERE " + strings.Repeat("NOT ", n) + "age = 30"
	st, err := Parse(sql, nil, cat)
	if err != nil {
		t.Fatalf("%d NOTs: %v", n, err)
	}
	res, err := s.Run(context.Background(), cat.Tables["people"], st.(*ir.Query), ir.Needs{}, fixture.Secret)
	if err != nil {
		t.Fatalf("%d NOTs in SQLite: %v", n, err)
	}
	if len(res.Cells) != 1 || res.Cells[0].Count != 4 {
		t.Errorf("%d NOTs: cells %+v, want one cell of count 4", n, res.Cells)
	}
}
