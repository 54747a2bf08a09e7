package proxy

import (
	"context"
	"encoding/json"
	"testing"

	"countwall/ir"
	"countwall/planner"
	"countwall/proxy/state/release"
)

// releaseCatalog has names that split badly on SQL words: a table named
// "my where t" and a column named "a and b".
func releaseCatalog() *ir.Catalog {
	pol := ir.DefaultPolicy()
	pol.AllowLike, pol.AllowMath = true, true
	cols := map[string]*ir.Column{}
	for name, typ := range map[string]ir.ColumnType{"pid": ir.TypeInt, "age": ir.TypeInt, "income": ir.TypeReal,
		"sex": ir.TypeText, "zip": ir.TypeText, "a and b": ir.TypeText, "Select": ir.TypeInt} {
		cols[name] = &ir.Column{Name: name, Type: typ}
	}
	cols["age"].Domain = &ir.Domain{IsRange: true, Min: 0, Max: 120} // arithmetic on it is then total
	t := func(name string) *ir.Table {
		return &ir.Table{Name: name, PrivacyUnit: "pid", Columns: cols, Policy: pol}
	}
	return &ir.Catalog{Tables: map[string]*ir.Table{"people": t("people"), "my where t": t("my where t")}}
}

// conjunctTexts are a query's top-level conjuncts as the owner reads them.
func conjunctTexts(q *release.Query) []string {
	out := []string{}
	for _, c := range q.Where {
		out = append(out, c.Text)
	}
	return out
}

func TestReleaseQuery(t *testing.T) {
	cat := releaseCatalog()
	cases := []struct {
		sql      string
		table    string
		groupBy  []string
		atLeast  int64 // 0: none
		distinct bool
		where    []string
	}{
		{sql: "SELECT count(*) FROM people", table: "people", where: []string{}},
		{sql: `select COUNT(*) from "my where t" where "a and b" = 'x' and age > 30`, table: "my where t",
			where: []string{`"a and b" = 'x'`, "age > 30"}},
		{sql: "SELECT count(*) FROM people WHERE (age >= 20 AND sex = 'F') AND zip IN ('1', '0', '1')", table: "people",
			where: []string{"age >= 20", "sex = 'F'", "zip in ('1', '0', '1')"}},
		{sql: "SELECT count(*) FROM people WHERE NOT (age < 30) AND NOT sex = 'F' AND NOT (zip IS NULL) AND age != 4", table: "people",
			where: []string{"age >= 30", "sex <> 'F'", "zip is not null", "age <> 4"}},
		{sql: "SELECT count(*) FROM people WHERE NOT (age BETWEEN 20 AND 29) AND NOT zip NOT IN ('1') AND NOT sex LIKE 'F%'", table: "people",
			where: []string{"age not between 20 and 29", "zip = '1'", "sex not like 'F%'"}},
		{sql: "SELECT count(*) FROM people WHERE NOT (age > 3 AND sex = 'F') AND NOT (sex = 'M' OR zip = '9')", table: "people",
			where: []string{"not (age > 3 and sex = 'F')", "not (sex = 'M' or zip = '9')"}},
		{sql: "SELECT count(*) FROM people WHERE age = 1 OR (sex = 'F' AND zip = '2') OR age IS NULL", table: "people",
			where: []string{"age = 1 or (sex = 'F' and zip = '2') or age is null"}},
		{sql: "SELECT count(*) FROM people WHERE NOT NOT (age = 30.0) AND income > 30.0 AND income < 1e3 AND income = 2.5", table: "people",
			where: []string{"age = 30", "income > 30", "income < 1000", "income = 2.5"}},
		{sql: "SELECT count(*) FROM people WHERE abs(age - 40) < 5 AND NOT (age * 2 + 1 >= 9)", table: "people",
			where: []string{"abs(age - 40) < 5", "(age * 2) + 1 < 9"}},
		{sql: `SELECT count(*) FROM people WHERE "Select" = 1 AND sex = 'O''Hara'`, table: "people",
			where: []string{`"Select" = 1`, "sex = 'O''Hara'"}},
		{sql: "SELECT sex, zip, count(*) > 5 FROM people GROUP BY zip, sex", table: "people", groupBy: []string{"sex", "zip"}, atLeast: 6, where: []string{}},
		{sql: "SELECT count(*) >= 5 FROM people WHERE age = 3", table: "people", atLeast: 5, where: []string{"age = 3"}},
		{sql: "SELECT count(DISTINCT pid) FROM people", table: "people", distinct: true, where: []string{}},
	}
	for _, tc := range cases {
		stmt, err := planner.Parse(tc.sql, nil, cat)
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		q := releaseQuery(stmt.(*ir.Query), nil)
		got := conjunctTexts(q)
		if js, _ := json.Marshal(got); string(js) != mustJSON(t, tc.where) {
			t.Errorf("%s:\n got %s\nwant %s", tc.sql, js, mustJSON(t, tc.where))
		}
		if q.Table != tc.table || mustJSON(t, q.GroupBy) != mustJSON(t, tc.groupBy) || q.Distinct != tc.distinct || q.Bounds != nil {
			t.Errorf("%s: table %q group by %v distinct %v bounds %v", tc.sql, q.Table, q.GroupBy, q.Distinct, q.Bounds)
		}
		if (q.AtLeast == nil) != (tc.atLeast == 0) || (q.AtLeast != nil && *q.AtLeast != tc.atLeast) {
			t.Errorf("%s: at least %v, want %d", tc.sql, q.AtLeast, tc.atLeast)
		}
	}
}

// TestReleaseQueryStructure holds the structure under the text: what each
// conjunct tests, of which column, with which constants.
func TestReleaseQueryStructure(t *testing.T) {
	cat := releaseCatalog()
	stmt, err := planner.Parse(`SELECT count(*) FROM "my where t" WHERE "a and b" = 'x' AND NOT (age BETWEEN 1 AND 2) AND (sex = 'F' OR age < 3) AND abs(age) > 2.5`, nil, cat)
	if err != nil {
		t.Fatal(err)
	}
	q := releaseQuery(stmt.(*ir.Query), &ir.Bounds{MaxRowsPerUnit: 2, MaxGroupsPerUnit: 3})
	num := func(s string) release.Constant { return release.Constant{Text: s} }
	want := &release.Query{Table: "my where t", Bounds: &release.Bounds{MaxRowsPerUnit: 2, MaxGroupsPerUnit: 3}, Where: []release.Conjunct{
		release.Compare("a and b", release.OpEq, release.Constant{Text: "x", String: true}),
		release.Between("age", true, num("1"), num("2")),
		release.Or([]release.Conjunct{release.Compare("sex", release.OpEq, release.Constant{Text: "F", String: true}), release.Compare("age", release.OpLt, num("3"))}),
		// the planner reads an integer expression > 2.5 as >= 3
		release.Expr("age", "abs(age)", release.OpGe, num("3")),
	}}
	if got := mustJSON(t, q); got != mustJSON(t, want) {
		t.Errorf("got  %s\nwant %s", got, mustJSON(t, want))
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAnswerAuditsItsQuery: an answered statement's audit row keeps its
// structured record, with the bounds of a mechanism that bounds
// contributions and none for one that does not; a refusal keeps none.
func TestAnswerAuditsItsQuery(t *testing.T) {
	f := newFixture(t, 20)
	for _, tc := range []struct {
		mechanism string
		bounds    *release.Bounds
	}{{"exact", nil}, {"laplace", &release.Bounds{MaxRowsPerUnit: 1, MaxGroupsPerUnit: 1}}} {
		e := f.open(t, tc.mechanism, nil)
		ctx := context.Background()
		s := e.NewSession("alice")
		v := "40"
		if _, err := s.Exec(ctx, "SELECT count(*) FROM people WHERE NOT (age < $1) AND sex = 'F'", []*string{&v}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Exec(ctx, "SELECT count(*) FROM nowhere", nil); err == nil {
			t.Fatal("a query of an unknown table was answered")
		}
		s.Close()
		e.state.Flush()
		log, err := e.state.AuditLog(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		q := log[0].Query
		if q == nil || q.Table != "people" || mustJSON(t, conjunctTexts(q)) != `["age \u003e= 40","sex = 'F'"]` || mustJSON(t, q.Bounds) != mustJSON(t, tc.bounds) {
			t.Errorf("%s: the answer was audited with %+v", tc.mechanism, q)
		}
		if log[1].Query != nil {
			t.Errorf("%s: the refusal was audited with %+v", tc.mechanism, log[1].Query)
		}
	}
}

// TestRereaderFillsOldRows: a row written before the audit kept the
// structured record is read again from its text with the config's
// catalog; one that no longer validates says so; others are left alone.
func TestRereaderFillsOldRows(t *testing.T) {
	f := newFixture(t, 5)
	r, err := OpenRereader(context.Background(), f.config(t, "exact", nil))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	old := release.Release{Kind: "query", Outcome: "answered", Shape: `select count(*) from people where "sex" = $1 and not age < $2`,
		Constants: []release.Constant{{Text: "F", String: true}, {Text: "30.0"}}}
	if !r.Fill(&old) || old.Query == nil || mustJSON(t, conjunctTexts(old.Query)) != `["sex = 'F'","age \u003e= 30"]` {
		t.Errorf("an old row was filled with %+v", old.Query)
	}
	stale := release.Release{Kind: "query", Outcome: "answered", Shape: "select count(*) from people where gone = 1"}
	if r.Fill(&stale) || stale.Query != nil {
		t.Errorf("a row that no longer validates was filled with %+v", stale.Query)
	}
	set := release.Release{Kind: "set", Outcome: "answered", Fingerprint: "00"}
	if !r.Fill(&set) || set.Query != nil {
		t.Errorf("a SET row was filled with %+v", set.Query)
	}
}
