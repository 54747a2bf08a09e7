package columnsim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"countwall/attacks"
	"countwall/ir"
	"countwall/mechanisms"
	"countwall/pgerror"
)

func testFirewall(t testing.TB, model KeyModel) *Firewall {
	t.Helper()
	m, err := mechanisms.New("cellkey", mechanisms.Params{"ptable": "uniform", "D": 3, "suppress_at": 4}, mechanisms.Env{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var groups []Group
	for v := int64(1); v <= 40; v++ {
		for _, sex := range []string{"F", "M"} {
			groups = append(groups, Group{Values: []any{v, sex}, Count: int64(rng.IntN(60)), Key: rng.Uint32()})
		}
	}
	f, err := New("people", []Column{{Name: "age", Type: ir.TypeInt}, {Name: "sex", Type: ir.TypeText}}, groups, m, model, 9)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// The fast path builds exactly the IR the planner builds, so it answers
// exactly as the planner path: 500 random statements of the fast shape,
// checked against the planner's IR and against the same statement in lower
// case (which only the planner reads).
func TestFastParseIsThePlannersIR(t *testing.T) {
	ctx := context.Background()
	f := testFirewall(t, Additive)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 500; i++ {
		var sql string
		if i%4 == 0 {
			sql = fmt.Sprintf("SELECT COUNT(*) FROM people WHERE age = %d", rng.IntN(45))
		} else {
			vals := make([]string, 1+rng.IntN(15))
			for j := range vals {
				vals[j] = fmt.Sprint(rng.IntN(45))
			}
			sql = "SELECT COUNT(*) FROM people WHERE age IN (" + strings.Join(vals, ", ") + ")"
		}
		fast, ok := f.fastParse(sql)
		if !ok {
			t.Fatalf("%s: not read by the fast path", sql)
		}
		slow, err := f.parse(sql)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%s: fast path IR %#v, planner IR %#v", sql, fast, slow)
		}
		a, err := attacks.Count(ctx, f, sql)
		if err != nil {
			t.Fatal(err)
		}
		b, err := attacks.Count(ctx, f, strings.ToLower(sql))
		if err != nil {
			t.Fatal(err)
		}
		if a != b {
			t.Fatalf("%s: %g by the fast path, %g by the planner", sql, a, b)
		}
	}
}

func TestFastParseLeavesOtherShapesToThePlanner(t *testing.T) {
	f := testFirewall(t, Additive)
	for _, sql := range []string{
		"SELECT COUNT(*) FROM people WHERE sex = 'F'",                   // text column
		"SELECT COUNT(*) FROM people WHERE age IN (1, 2) AND sex = 'F'", // more than one condition
		"SELECT COUNT(*) FROM other WHERE age = 3",                      // another table
		"SELECT COUNT(*) FROM people WHERE age IN (1, x)",               // not a number
		"SELECT COUNT(*) FROM people WHERE age = 3 OR age = 4",
		"SELECT COUNT(*) FROM people",
	} {
		if _, ok := f.fastParse(sql); ok {
			t.Errorf("%s: taken by the fast path", sql)
		}
	}
}

func TestQueryAnswersAndRefusals(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		sql      string
		sqlstate string
	}{
		{"SELECT COUNT(*) FROM people WHERE sex = 'F' AND age BETWEEN 20 AND 29", ""},
		{"SELECT COUNT(*) FROM people WHERE NOT (age > 30) OR sex <> 'M'", ""},
		{"SELECT COUNT(*) > 100 FROM people WHERE age < 10", ""},
		{"SELECT * FROM people", pgerror.FeatureNotSupported},
		{"SELECT sex, COUNT(*) FROM people GROUP BY sex", pgerror.FeatureNotSupported},
		{"SELECT COUNT(*) FROM people WHERE nope = 1", pgerror.UndefinedColumn},
		{"SELECT COUNT(*) FROM nowhere", pgerror.UndefinedTable},
	}
	f := testFirewall(t, Additive)
	for _, tc := range tests {
		rows, err := f.Query(ctx, tc.sql)
		if got := attacks.SQLState(err); got != tc.sqlstate {
			t.Errorf("%s: SQLSTATE %q (%v), want %q", tc.sql, got, err, tc.sqlstate)
			continue
		}
		if err == nil && (len(rows.Values) != 1 || len(rows.Values[0]) != 1) {
			t.Errorf("%s: %d rows, want one number", tc.sql, len(rows.Values))
		}
	}
	rows, err := f.Query(ctx, "SHOW budget")
	if err != nil || len(rows.Columns) != 5 || len(rows.Values) != 0 {
		t.Errorf("SHOW budget = %+v, %v; want the header and no rows", rows, err)
	}
}

// The same contributors get the same answer whatever the SQL text, under
// both key models; the additive key of a union is the sum of its parts'
// keys, the independent key is not.
func TestKeysFollowTheContributors(t *testing.T) {
	for _, model := range []KeyModel{Additive, Independent} {
		f := testFirewall(t, model)
		a := f.cell(mustCompile(t, f, "SELECT COUNT(*) FROM people WHERE age IN (3, 4)"))
		b := f.cell(mustCompile(t, f, "SELECT COUNT(*) FROM people WHERE age BETWEEN 3 AND 4"))
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%v: the same rows got cells %+v and %+v", model, a, b)
		}
		p3 := f.cell(mustCompile(t, f, "SELECT COUNT(*) FROM people WHERE age = 3"))
		p4 := f.cell(mustCompile(t, f, "SELECT COUNT(*) FROM people WHERE age = 4"))
		if a.Count != p3.Count+p4.Count {
			t.Errorf("%v: count %d, parts %d + %d", model, a.Count, p3.Count, p4.Count)
		}
		if additive := a.Key == p3.Key+p4.Key; additive != (model == Additive) {
			t.Errorf("%v: union key %d, parts %d + %d", model, a.Key, p3.Key, p4.Key)
		}
	}
}

func mustCompile(t *testing.T, f *Firewall, sql string) func(Group) bool {
	t.Helper()
	q, err := f.parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	m, err := f.compile(q.Where)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestNewRefusesMistypedGroups(t *testing.T) {
	m, _ := mechanisms.New("exact", nil, mechanisms.Env{})
	_, err := New("t", []Column{{Name: "age", Type: ir.TypeInt}}, []Group{{Values: []any{"x"}, Count: 1}}, m, Additive, 0)
	if err == nil {
		t.Error("a text value in an integer column was accepted")
	}
}

// BenchmarkQuery is the simulated firewall's rate on the noise remover's
// statements (fast path) and on statements the planner must read.
func BenchmarkQuery(b *testing.B) {
	ctx := context.Background()
	f := testFirewall(b, Additive)
	b.Run("fast", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := f.Query(ctx, fmt.Sprintf("SELECT COUNT(*) FROM people WHERE age IN (3, 4, 5, 6, 7, %d)", i%100000+50)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("planner", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := f.Query(ctx, fmt.Sprintf("SELECT COUNT(*) FROM people WHERE sex = 'F' AND age IN (3, 4, 5, 6, 7, %d)", i%100000+50)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
