package planner

import (
	"fmt"
	"reflect"
	"testing"

	"countwall/ir"
	"countwall/pgerror"
	"countwall/pgtypes"
)

// TestPreparedBindsLikeParse: a statement prepared once and bound again
// and again gives, each time, what reading its own text with those
// arguments gives: the same statement or the same error. The argument sets
// are bound in an order that returns to the first, so that no binding keeps
// anything of the one before it (the shapes' trees are shared).
func TestPreparedBindsLikeParse(t *testing.T) {
	cat := testCatalog(func(p *ir.Policy) { p.AllowLike, p.AllowMath, p.UnitInWhere = true, true, true })
	bad := string([]byte{0xff, 0xfe})
	argSets := [][]*string{
		{str("40"), str("it's")},
		nil,
		{str("forty"), str("x")},
		{nil, str("F")},
		{str("40"), str(bad)},
		{str("9223372036854775808")},
		{str("40"), str("it's")},
	}
	corpus := append([]string{
		"SELECT COUNT(*) FROM people WHERE age > $1 AND suburb = $2",
		"SELECT COUNT(*) FROM people WHERE age > $2",
		"SELECT COUNT(*) FROM nosuch WHERE age > $1",
		"SELECT COUNT(*) FROM people WHERE suburb = -$2 OR age = -$1",
		"SELECT COUNT(*) FROM people WHERE age BETWEEN $1 AND 60 AND sex IN ('F', $2)",
		"SELECT COUNT(*) FROM people WHERE $1",
		"DELETE FROM people WHERE id = $1",
		"SET epsilon = $1",
		"COMMIT",
		"",
		"SELECT COUNT(*) FROM people WHERE age > 3 :: int",
		"SELECT COUNT(*) FROM people WHERE suburb = 'a\x00'",
		"SELECT COUNT(*) FROM people WHERE age >",
		"SELECT COUNT(*) FROM people WHERE age > $1" + string([]byte{0xff}),
	}, shapeCorpus...)
	for _, sql := range corpus {
		pr := Prepare(sql, cat)
		for i, args := range argSets {
			got, err := pr.Bind(args)
			want, wantErr := ownParse(sql, args, cat)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) || pgerror.SQLState(err) != pgerror.SQLState(wantErr) {
				t.Fatalf("%q with argument set %d: bound error %v, from its own text %v", sql, i, err, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%q with argument set %d: bound %#v, from its own text %#v", sql, i, got, want)
			}
		}
	}
}

// TestPreparedDescribe: before its arguments are known, a prepared
// statement says the type of each $n and its shape, or the error that
// refuses it whatever they are.
func TestPreparedDescribe(t *testing.T) {
	cat := testCatalog(nil)
	tests := []struct {
		sql    string
		params []pgtypes.OID
		alias  string // the shape's COUNT alias, for a query
		code   pgerror.Code
	}{
		{"SELECT COUNT(*) AS n FROM people WHERE age > $1 AND suburb = $2", []pgtypes.OID{pgtypes.Int8, pgtypes.Text}, "n", ""},
		{"SELECT COUNT(*) FROM people", []pgtypes.OID{}, "count", ""},
		{"SELECT COUNT(*) FROM people WHERE age > $2", nil, "", pgerror.IndeterminateDatatype},              // $1 is in no comparison
		{"SELECT COUNT(*) FROM people WHERE suburb = -$1", nil, "", pgerror.AmbiguousFunction},              // - unknown
		{"SELECT COUNT(*) FROM people WHERE age IN ($1, 1.5)", []pgtypes.OID{pgtypes.Numeric}, "count", ""}, // the list's common type
		{"SELECT COUNT(*) FROM nosuch WHERE age > $1", nil, "", pgerror.UndefinedTable},
		{"DELETE FROM people", nil, "", pgerror.ReadOnlySQLTransaction},
	}
	for _, tc := range tests {
		params, shape, err := Prepare(tc.sql, cat).Describe()
		if got := pgerror.SQLState(err); got != tc.code {
			t.Errorf("%q: error %v, want SQLSTATE %q", tc.sql, err, tc.code)
			continue
		}
		if tc.code != "" {
			continue
		}
		if !reflect.DeepEqual(params, tc.params) {
			t.Errorf("%q: parameters %v, want %v", tc.sql, params, tc.params)
		}
		if q, ok := shape.(*ir.Query); !ok || q.Alias != tc.alias {
			t.Errorf("%q: shape %#v, want a query with alias %q", tc.sql, shape, tc.alias)
		}
	}
}

// TestPreparedControl: transaction control is known from a prepared
// statement's tokens, without binding it; a refused statement is none.
func TestPreparedControl(t *testing.T) {
	cat := testCatalog(nil)
	tests := []struct {
		sql  string
		want ir.ChatterKind
	}{
		{"BEGIN", ir.ChatterBegin},
		{"start transaction", ir.ChatterBegin},
		{"COMMIT WORK", ir.ChatterCommit},
		{"end", ir.ChatterCommit},
		{"-- done\nROLLBACK;", ir.ChatterRollback},
		{"ABORT", ir.ChatterRollback},
		{"COMMIT; COMMIT", ""},
		{"COMMITT", ""},
		{"SELECT COUNT(*) FROM people WHERE age > $1", ""},
		{"SET epsilon = 0.2", ""},
		{"", ""},
	}
	for _, tc := range tests {
		if got := Prepare(tc.sql, cat).Control(); got != tc.want {
			t.Errorf("Control(%q) = %q, want %q", tc.sql, got, tc.want)
		}
	}
}

// BenchmarkExtendedProtocolReading measures what the planner spends on one
// extended-protocol statement (Parse with Describe, then Bind): "text
// thrice" reads the text three times, as the Engine did before statements
// were prepared (the parameters' types, the shape with placeholders, the
// execution); "prepared" reads it once and binds the kept tree; "bind"
// is one more execution of a statement already prepared:
//
//	go test ./planner -run '^$' -bench ExtendedProtocolReading -count 6 | benchstat -
func BenchmarkExtendedProtocolReading(b *testing.B) {
	cat := testCatalog(nil)
	const sql = "SELECT COUNT(*) FROM people WHERE age BETWEEN $1 AND $2 AND sex = $3 AND suburb IN ('a', 'b', 'c')"
	args := []*string{str("30"), str("49"), str("F")}
	b.Run("text thrice", func(b *testing.B) {
		for b.Loop() {
			if _, err := DescribeParams(sql, cat); err != nil {
				b.Fatal(err)
			}
			if _, err := Parse(sql, args, cat); err != nil { // the shape, read with values
				b.Fatal(err)
			}
			if _, err := Parse(sql, args, cat); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("prepared", func(b *testing.B) {
		for b.Loop() {
			pr := Prepare(sql, cat)
			if _, _, err := pr.Describe(); err != nil {
				b.Fatal(err)
			}
			if _, err := pr.Bind(args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bind", func(b *testing.B) {
		pr := Prepare(sql, cat)
		for b.Loop() {
			if _, err := pr.Bind(args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parse", func(b *testing.B) {
		for b.Loop() {
			if _, err := Parse(sql, args, cat); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// attackStatements are statements as attack programs send them: an
// idp-reconstruct threshold count over a group of earlier columns and a
// range, and a noise-remover IN list.
var attackStatements = []string{
	"SELECT COUNT(*) > 12 FROM people WHERE sex = 'F' AND age >= 30 AND age < 45 AND suburb = 'suburb_0003'",
	"SELECT COUNT(*) FROM people WHERE age IN (3, 5, 8, 40, 42, 44, 45)",
}

// BenchmarkAttackStatementReading is what the planner spends reading one
// attack statement the Engine has not seen (Prepare, then Bind), its shape
// already cached:
//
//	go test ./planner -run '^$' -bench AttackStatementReading -benchmem -count 6 | benchstat -
func BenchmarkAttackStatementReading(b *testing.B) {
	cat := testCatalog(nil)
	for i := 0; b.Loop(); i++ {
		if _, err := Prepare(attackStatements[i%len(attackStatements)], cat).Bind(nil); err != nil {
			b.Fatal(err)
		}
	}
}
