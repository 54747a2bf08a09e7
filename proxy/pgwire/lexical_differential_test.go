package pgwire

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"

	"countwall/dataset"
	"countwall/pgerror"
)

// lexRow is a row of the lexical test table "survey". Its values hold the
// characters that separate PostgreSQL's lexical rules from MySQL's
// (backslashes, quotes, comment marks), and one column is named by the
// reserved word default.
type lexRow struct {
	id          int
	sex, suburb string
	age         int
	dflt        string // column "default"
}

var lexRows = func() []lexRow {
	suburbs := []string{`suburb_0007`, `suburb\_0007`, `F\`, `O'Hara`, `a -- b`, `/* c */`, `# d`, `x\`, `say "hi"`, "back`tick", `$1`, `' OR age >= 0 --`}
	var rows []lexRow
	for i := 0; i < 60; i++ {
		sex := "M"
		if i%3 == 0 {
			sex = "F"
		}
		if i%7 == 0 {
			sex = `F\`
		}
		dflt := "yes"
		if i%4 == 0 {
			dflt = "no"
		}
		rows = append(rows, lexRow{id: i + 1, sex: sex, suburb: suburbs[i%len(suburbs)], age: 20 + i%50, dflt: dflt})
	}
	// More suburb_0007 than suburb\_0007, so reading one as the other shows.
	for i := 60; i < 63; i++ {
		rows = append(rows, lexRow{id: i + 1, sex: "M", suburb: "suburb_0007", age: 33, dflt: "yes"})
	}
	return rows
}()

func countRows(keep func(lexRow) bool) int64 {
	n := int64(0)
	for _, r := range lexRows {
		if keep(r) {
			n++
		}
	}
	return n
}

// startLexServer loads lexRows through `countwall load`'s code into a fresh
// database and serves it with the exact mechanism.
func startLexServer(t *testing.T) *testServer {
	t.Helper()
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "survey.csv")
	f, err := os.Create(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(f)
	w.Write([]string{"id", "sex", "suburb", "age", "default"}) //nolint:errcheck // checked by w.Error below
	for _, r := range lexRows {
		w.Write([]string{strconv.Itoa(r.id), r.sex, r.suburb, strconv.Itoa(r.age), r.dflt}) //nolint:errcheck // checked by w.Error below
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	dbPath := filepath.Join(dir, "survey.db")
	if _, err := dataset.LoadCSV(context.Background(), dataset.LoadOptions{CSVPath: csvPath, DBPath: dbPath, Table: "survey", Unit: "id"}); err != nil {
		t.Fatal(err)
	}
	verifier, err := NewVerifier(testPassword, 4096)
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`database: %s
state: %s
mechanism:
  name: exact
analysts:
  %s:
    password: %q
tables:
  survey:
    privacy_unit: id
    columns: [sex, suburb, age, default]
    domains:
      default: ["no", "yes"]
`, dbPath, filepath.Join(dir, "state.db"), testAnalyst, verifier)
	return serveConfigForTest(t, dir, body)
}

// TestLexicalDifferential sends every case three ways and wants the same
// answer, or the same refusal, from all three:
//   - text: the statement as PostgreSQL reads it, over the simple protocol;
//   - bound: the same statement with $n, values bound over the extended protocol;
//   - interpolated: the $n statement and values given to pgx's simple-protocol
//     mode, which pastes the values into the text client-side as psycopg2
//     does (quotes doubled, backslashes left alone, as standard_conforming_strings
//     on says).
func TestLexicalDifferential(t *testing.T) {
	all := func(lexRow) bool { return true }
	cases := []struct {
		name  string
		text  string // literal statement
		param string // the same with $n
		args  []any
		want  func(lexRow) bool // nil when refused
		code  pgerror.Code      // the SQLSTATE of the refusal
	}{
		{"the hostile interpolation: F\\ is a string",
			`SELECT COUNT(*) FROM survey WHERE sex = 'F\' AND suburb = ' OR age >= 0 --'`,
			`SELECT COUNT(*) FROM survey WHERE sex = $1 AND suburb = $2`, []any{`F\`, ` OR age >= 0 --`},
			func(r lexRow) bool { return false }, ""},
		{"backslash underscore",
			`SELECT COUNT(*) FROM survey WHERE suburb = 'suburb\_0007'`,
			`SELECT COUNT(*) FROM survey WHERE suburb = $1`, []any{`suburb\_0007`},
			func(r lexRow) bool { return r.suburb == `suburb\_0007` }, ""},
		{"no backslash",
			`SELECT COUNT(*) FROM survey WHERE suburb = 'suburb_0007'`,
			`SELECT COUNT(*) FROM survey WHERE suburb = $1`, []any{`suburb_0007`},
			func(r lexRow) bool { return r.suburb == `suburb_0007` }, ""},
		{"string ending in a backslash",
			`SELECT COUNT(*) FROM survey WHERE sex = 'F\'`,
			`SELECT COUNT(*) FROM survey WHERE sex = $1`, []any{`F\`},
			func(r lexRow) bool { return r.sex == `F\` }, ""},
		{"backslash before the closing quote, then another condition",
			`SELECT COUNT(*) FROM survey WHERE suburb = 'x\' OR sex = 'F'`,
			`SELECT COUNT(*) FROM survey WHERE suburb = $1 OR sex = $2`, []any{`x\`, "F"},
			func(r lexRow) bool { return r.suburb == `x\` || r.sex == "F" }, ""},
		{"embedded quote",
			`SELECT COUNT(*) FROM survey WHERE suburb = 'O''Hara'`,
			`SELECT COUNT(*) FROM survey WHERE suburb = $1`, []any{`O'Hara`},
			func(r lexRow) bool { return r.suburb == `O'Hara` }, ""},
		{"quote that would end the string early",
			`SELECT COUNT(*) FROM survey WHERE suburb = ''' OR age >= 0 --'`,
			`SELECT COUNT(*) FROM survey WHERE suburb = $1`, []any{`' OR age >= 0 --`},
			func(r lexRow) bool { return r.suburb == `' OR age >= 0 --` }, ""},
		{"double quotes inside a string",
			`SELECT COUNT(*) FROM survey WHERE suburb = 'say "hi"'`,
			`SELECT COUNT(*) FROM survey WHERE suburb = $1`, []any{`say "hi"`},
			func(r lexRow) bool { return r.suburb == `say "hi"` }, ""},
		{"backquote inside a string",
			"SELECT COUNT(*) FROM survey WHERE suburb = 'back`tick'",
			`SELECT COUNT(*) FROM survey WHERE suburb = $1`, []any{"back`tick"},
			func(r lexRow) bool { return r.suburb == "back`tick" }, ""},
		{"dollar number inside a string",
			`SELECT COUNT(*) FROM survey WHERE suburb = '$1'`,
			`SELECT COUNT(*) FROM survey WHERE suburb = $1`, []any{`$1`},
			func(r lexRow) bool { return r.suburb == `$1` }, ""},
		{"line comment inside a string",
			`SELECT COUNT(*) FROM survey WHERE suburb = 'a -- b'`,
			`SELECT COUNT(*) FROM survey WHERE suburb = $1`, []any{`a -- b`},
			func(r lexRow) bool { return r.suburb == `a -- b` }, ""},
		{"block comment inside a string",
			`SELECT COUNT(*) FROM survey WHERE suburb = '/* c */'`,
			`SELECT COUNT(*) FROM survey WHERE suburb = $1`, []any{`/* c */`},
			func(r lexRow) bool { return r.suburb == `/* c */` }, ""},
		{"hash inside a string",
			`SELECT COUNT(*) FROM survey WHERE suburb = '# d'`,
			`SELECT COUNT(*) FROM survey WHERE suburb = $1`, []any{`# d`},
			func(r lexRow) bool { return r.suburb == `# d` }, ""},
		{"string inside a comment",
			`SELECT COUNT(*) FROM survey /* WHERE suburb = 'x' */ WHERE sex = 'M'`,
			`SELECT COUNT(*) FROM survey /* WHERE suburb = 'x' */ WHERE sex = $1`, []any{"M"},
			func(r lexRow) bool { return r.sex == "M" }, ""},
		{"nested comments",
			`SELECT COUNT(*) FROM survey /* a /* b */ WHERE suburb = 'x' */ WHERE sex = 'M'`,
			`SELECT COUNT(*) FROM survey /* a /* b */ WHERE suburb = 'x' */ WHERE sex = $1`, []any{"M"},
			func(r lexRow) bool { return r.sex == "M" }, ""},
		{"versioned comment is a comment",
			`SELECT COUNT(*) FROM survey /*! WHERE suburb = 'x' */ WHERE age >= 30`,
			`SELECT COUNT(*) FROM survey /*! WHERE suburb = 'x' */ WHERE age >= $1`, []any{30},
			func(r lexRow) bool { return r.age >= 30 }, ""},
		{"line comment to the end",
			"SELECT COUNT(*) FROM survey WHERE age < 40 -- AND sex = 'F'",
			"SELECT COUNT(*) FROM survey WHERE age < $1 -- AND sex = 'F'", []any{40},
			func(r lexRow) bool { return r.age < 40 }, ""},
		{"double-quoted table and column",
			`SELECT COUNT(*) FROM "survey" WHERE "sex" = 'F'`,
			`SELECT COUNT(*) FROM "survey" WHERE "sex" = $1`, []any{"F"},
			func(r lexRow) bool { return r.sex == "F" }, ""},
		{"reserved-word column, quoted",
			`SELECT COUNT(*) FROM survey WHERE "default" = 'no'`,
			`SELECT COUNT(*) FROM survey WHERE "default" = $1`, []any{"no"},
			func(r lexRow) bool { return r.dflt == "no" }, ""},
		{"reserved-word column, upper case in quotes keeps its case",
			`SELECT COUNT(*) FROM survey WHERE "DEFAULT" = 'no'`,
			`SELECT COUNT(*) FROM survey WHERE "DEFAULT" = $1`, []any{"no"},
			nil, pgerror.UndefinedColumn},
		{"reserved-word column, unquoted",
			`SELECT COUNT(*) FROM survey WHERE default = 'no'`,
			`SELECT COUNT(*) FROM survey WHERE default = $1`, []any{"no"},
			nil, pgerror.SyntaxError},
		{"double-quoted value is a column",
			`SELECT COUNT(*) FROM survey WHERE sex = "F"`,
			`SELECT COUNT(*) FROM survey WHERE sex = "F" AND age > $1`, []any{0},
			nil, pgerror.UndefinedColumn},
		{"unquoted names fold to lower case",
			`SELECT COUNT(*) FROM SURVEY WHERE Sex = 'M'`,
			`SELECT COUNT(*) FROM SURVEY WHERE Sex = $1`, []any{"M"},
			func(r lexRow) bool { return r.sex == "M" }, ""},
		{"hash is no comment",
			`SELECT COUNT(*) FROM survey WHERE age > 0 # AND sex = 'F'`,
			`SELECT COUNT(*) FROM survey WHERE age > $1 # AND sex = 'F'`, []any{0},
			nil, pgerror.SyntaxError},
		{"backquotes",
			"SELECT COUNT(*) FROM `survey` WHERE age > 0",
			"SELECT COUNT(*) FROM `survey` WHERE age > $1", []any{0},
			nil, pgerror.SyntaxError},
		{"escape string",
			`SELECT COUNT(*) FROM survey WHERE suburb = E'x\\'`,
			`SELECT COUNT(*) FROM survey WHERE suburb = E'x\\' AND age > $1`, []any{0},
			nil, pgerror.FeatureNotSupported},
		{"dollar quoting",
			`SELECT COUNT(*) FROM survey WHERE suburb = $$x$$`,
			`SELECT COUNT(*) FROM survey WHERE suburb = $$x$$ AND age > $1`, []any{0},
			nil, pgerror.FeatureNotSupported},
		{"unicode escapes",
			`SELECT COUNT(*) FROM survey WHERE U&"sex" = 'F'`,
			`SELECT COUNT(*) FROM survey WHERE U&"sex" = $1`, []any{"F"},
			nil, pgerror.FeatureNotSupported},
		{"no condition at all",
			`SELECT COUNT(*) FROM survey`,
			`SELECT COUNT(*) FROM survey WHERE age > $1`, []any{-1},
			all, ""},
		{"NaN for an integer column",
			`SELECT COUNT(*) FROM survey WHERE age < 'NaN'`,
			`SELECT COUNT(*) FROM survey WHERE age < $1`, []any{"NaN"},
			nil, pgerror.InvalidTextRepresentation},
		{"Infinity for an integer column",
			`SELECT COUNT(*) FROM survey WHERE age < 'Infinity'`,
			`SELECT COUNT(*) FROM survey WHERE age < $1`, []any{"Infinity"},
			nil, pgerror.InvalidTextRepresentation},
	}
	ts := startLexServer(t)
	ctx := context.Background()
	text := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	bound := ts.connect(t, pgx.QueryExecModeExec)
	interpolated := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			type answer struct {
				n    int64
				code pgerror.Code
			}
			ask := func(conn *pgx.Conn, sql string, args ...any) answer {
				var n int64
				err := conn.QueryRow(ctx, sql, args...).Scan(&n)
				if err != nil {
					code := pgerror.SQLState(err)
					if code == "" {
						t.Fatalf("%q: %v (no SQLSTATE)", sql, err)
					}
					return answer{code: code}
				}
				return answer{n: n}
			}
			got := map[string]answer{
				"text":         ask(text, tc.text),
				"bound":        ask(bound, tc.param, tc.args...),
				"interpolated": ask(interpolated, tc.param, tc.args...),
			}
			want := answer{code: tc.code}
			if tc.want != nil {
				want = answer{n: countRows(tc.want)}
			}
			for way, a := range got {
				if a != want {
					t.Errorf("%s: got %+v, want %+v", way, a, want)
				}
			}
		})
	}
}

// TestFloatNaNParameter: a NaN or infinite float8 bound over the extended
// protocol to an integer comparison is refused as PostgreSQL's bigint input
// refuses 'x' there (22P02).
func TestFloatNaNParameter(t *testing.T) {
	ts := startLexServer(t)
	conn := ts.connect(t, pgx.QueryExecModeExec)
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		var n int64
		err := conn.QueryRow(context.Background(), "SELECT COUNT(*) FROM survey WHERE age < $1", v).Scan(&n)
		if got := pgerror.SQLState(err); got != pgerror.InvalidTextRepresentation {
			t.Errorf("float8 %v bound: %v (SQLSTATE %q), want 22P02", v, err, got)
		}
	}
}
