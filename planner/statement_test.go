package planner

import (
	"countwall/ir"
	"countwall/pgerror"
	"countwall/pgtypes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// testCatalog is a people table: id is the privacy unit, age has a range
// domain, sex a category domain, suburb none.
func testCatalog(mod func(*ir.Policy)) *ir.Catalog {
	pol := ir.DefaultPolicy()
	if mod != nil {
		mod(&pol)
	}
	return &ir.Catalog{Tables: map[string]*ir.Table{"people": {
		Name: "people", PrivacyUnit: "id", Policy: pol,
		Columns: map[string]*ir.Column{
			"id":     {Name: "id", Type: ir.TypeInt},
			"age":    {Name: "age", Type: ir.TypeInt, Domain: &ir.Domain{IsRange: true, Min: 0, Max: 120}},
			"sex":    {Name: "sex", Type: ir.TypeText, Domain: &ir.Domain{Categories: []string{"F", "M"}}},
			"suburb": {Name: "suburb", Type: ir.TypeText},
			"income": {Name: "income", Type: ir.TypeInt},
			"score":  {Name: "score", Type: ir.TypeReal},
		},
	}}}
}

// The literal values in these queries (Zanzibar, 4242) must never come back
// in an error message.
func TestRefusals(t *testing.T) {
	long := "SELECT COUNT(*) FROM people WHERE suburb = '" + strings.Repeat("x", 9000) + "'"
	tests := []struct {
		name, sql string
		code      pgerror.Code
		mention   string
		policy    func(*ir.Policy)
	}{
		{"select star", "SELECT * FROM people", pgerror.FeatureNotSupported, "SELECT *", nil},
		{"bare column", "SELECT age FROM people", pgerror.FeatureNotSupported, "COUNT", nil},
		{"sum of text", "SELECT SUM(suburb) FROM people", pgerror.UndefinedFunction, "sum(text)", nil},
		{"avg of text", "SELECT AVG(sex) FROM people WHERE suburb = 'Zanzibar'", pgerror.UndefinedFunction, "avg(text)", nil},
		{"min", "SELECT MIN(age) FROM people", pgerror.FeatureNotSupported, "MIN", nil},
		{"max", "SELECT MAX(income) FROM people", pgerror.FeatureNotSupported, "MAX", nil},
		{"count of column", "SELECT COUNT(age) FROM people", pgerror.FeatureNotSupported, "COUNT(age)", nil},
		{"count distinct non-unit", "SELECT COUNT(DISTINCT age) FROM people", pgerror.FeatureNotSupported, "DISTINCT age", nil},
		{"having", "SELECT sex, COUNT(*) FROM people GROUP BY sex HAVING COUNT(*) > 4242", pgerror.FeatureNotSupported, "HAVING", nil},
		{"select distinct", "SELECT DISTINCT COUNT(*) FROM people", pgerror.FeatureNotSupported, "DISTINCT", nil},
		{"limit", "SELECT COUNT(*) FROM people LIMIT 4242", pgerror.FeatureNotSupported, "LIMIT", nil},
		{"join", "SELECT COUNT(*) FROM people JOIN people AS p2 ON people.id = p2.id", pgerror.FeatureNotSupported, "JOIN", nil},
		{"two tables", "SELECT COUNT(*) FROM people, people", pgerror.FeatureNotSupported, "one table", nil},
		{"other schema", "SELECT COUNT(*) FROM secret.people", pgerror.InvalidSchemaName, "secret", nil},
		{"subquery in where", "SELECT COUNT(*) FROM people WHERE age IN (SELECT age FROM people)", pgerror.FeatureNotSupported, "subqueries", nil},
		{"subquery in from", "SELECT COUNT(*) FROM (SELECT * FROM people) AS t", pgerror.FeatureNotSupported, "subqueries", nil},
		{"exists", "SELECT COUNT(*) FROM people WHERE EXISTS (SELECT 1 FROM people)", pgerror.FeatureNotSupported, "subqueries", nil},
		{"union", "SELECT COUNT(*) FROM people UNION SELECT COUNT(*) FROM people", pgerror.FeatureNotSupported, "UNION", nil},
		{"cte", "WITH t AS (SELECT * FROM people) SELECT COUNT(*) FROM t", pgerror.FeatureNotSupported, "WITH", nil},
		{"window", "SELECT COUNT(*) OVER (PARTITION BY sex) FROM people", pgerror.FeatureNotSupported, "window", nil},
		{"column to column", "SELECT COUNT(*) FROM people WHERE age = income", pgerror.FeatureNotSupported, "column-to-column", nil},
		{"insert", "INSERT INTO people (id) VALUES (4242)", pgerror.ReadOnlySQLTransaction, "INSERT", nil},
		{"update", "UPDATE people SET age = 4242", pgerror.ReadOnlySQLTransaction, "UPDATE", nil},
		{"delete", "DELETE FROM people WHERE suburb = 'Zanzibar'", pgerror.ReadOnlySQLTransaction, "DELETE", nil},
		{"drop", "DROP TABLE people", pgerror.ReadOnlySQLTransaction, "DROP", nil},
		{"create", "CREATE TABLE t (x int)", pgerror.ReadOnlySQLTransaction, "CREATE", nil},
		{"pragma", "PRAGMA table_info(people)", pgerror.FeatureNotSupported, "PRAGMA", nil},
		{"attach", "ATTACH DATABASE 'Zanzibar.db' AS z", pgerror.FeatureNotSupported, "ATTACH", nil},
		{"two statements", "SELECT COUNT(*) FROM people; SELECT COUNT(*) FROM people", pgerror.SyntaxError, "several statements", nil},
		{"unknown table", "SELECT COUNT(*) FROM persons", pgerror.UndefinedTable, `"persons"`, nil},
		{"unknown column", "SELECT COUNT(*) FROM people WHERE height > 4242", pgerror.UndefinedColumn, `"height"`, nil},
		{"text on int column", "SELECT COUNT(*) FROM people WHERE age = 'Zanzibar'", pgerror.InvalidTextRepresentation, `"age"`, nil},
		{"quoted decimal on int column", "SELECT COUNT(*) FROM people WHERE age = '30.5'", pgerror.InvalidTextRepresentation, `"age"`, nil},
		{"number on text column", "SELECT COUNT(*) FROM people WHERE suburb = 4242", pgerror.UndefinedFunction, `"suburb"`, nil},
		{"over size limit", long, pgerror.ProgramLimitExceeded, "bytes", nil},
		{"in list too long", "SELECT COUNT(*) FROM people WHERE age IN (1,2,3,4)", pgerror.ProgramLimitExceeded, "IN list", func(p *ir.Policy) { p.MaxInList = 3 }},
		{"too many conditions", "SELECT COUNT(*) FROM people WHERE age > 1 AND age < 4242 AND sex = 'F'", pgerror.ProgramLimitExceeded, "conditions", func(p *ir.Policy) { p.MaxConditions = 2 }},
		{"unit in where", "SELECT COUNT(*) FROM people WHERE id = 4242", pgerror.InsufficientPrivilege, `"id"`, nil},
		{"or off", "SELECT COUNT(*) FROM people WHERE age = 1 OR age = 4242", pgerror.InsufficientPrivilege, "OR", func(p *ir.Policy) { p.AllowOr = false }},
		{"not equal off", "SELECT COUNT(*) FROM people WHERE age <> 4242", pgerror.InsufficientPrivilege, "<>", func(p *ir.Policy) { p.AllowNotEqual = false }},
		{"like off", "SELECT COUNT(*) FROM people WHERE suburb LIKE 'Zanz%'", pgerror.InsufficientPrivilege, "LIKE", nil},
		{"like pattern ending in the escape", `SELECT COUNT(*) FROM people WHERE suburb LIKE 'Zanz\'`, pgerror.InvalidEscapeSequence, "escape", func(p *ir.Policy) { p.AllowLike = true }},
		{"invalid UTF-8", "SELECT COUNT(*) FROM people WHERE suburb = '\xff'", pgerror.CharacterNotInRepertoire, "UTF8", nil},
		{"division by a constant zero", "SELECT COUNT(*) FROM people WHERE age / 0 > 1", pgerror.DivisionByZero, "division by zero", func(p *ir.Policy) { p.AllowMath = true }},
		{"modulo by a constant zero", "SELECT COUNT(*) FROM people WHERE age % 0.0 > 1", pgerror.DivisionByZero, "division by zero", func(p *ir.Policy) { p.AllowMath = true }},
		{"length of an integer", "SELECT COUNT(*) FROM people WHERE length(age) > 1", pgerror.UndefinedFunction, "length(bigint)", func(p *ir.Policy) { p.AllowMath = true }},
		{"abs of text", "SELECT COUNT(*) FROM people WHERE abs(suburb) > 1", pgerror.UndefinedFunction, "abs(text)", func(p *ir.Policy) { p.AllowMath = true }},
		{"text in arithmetic", "SELECT COUNT(*) FROM people WHERE length(suburb) + lower(suburb) > 1", pgerror.UndefinedFunction, "operator does not exist", func(p *ir.Policy) { p.AllowMath = true }},
		{"math off", "SELECT COUNT(*) FROM people WHERE age + 1 > 4242", pgerror.InsufficientPrivilege, "arithmetic", nil},
		{"strict range", "SELECT COUNT(*) FROM people WHERE age > 4242", pgerror.InsufficientPrivilege, "strict", func(p *ir.Policy) { p.Strict = true }},
		{"strict or", "SELECT COUNT(*) FROM people WHERE sex = 'F' OR sex = 'M'", pgerror.InsufficientPrivilege, "strict", func(p *ir.Policy) { p.Strict = true }},
		{"group column not selected", "SELECT COUNT(*) FROM people GROUP BY sex", pgerror.GroupingError, `"sex"`, nil},
		{"selected column not grouped", "SELECT sex, COUNT(*) FROM people", pgerror.GroupingError, `"sex"`, nil},
		{"order by count", "SELECT sex, COUNT(*) AS n FROM people GROUP BY sex ORDER BY n", pgerror.GroupingError, `"n"`, nil},
		{"group by expression", "SELECT COUNT(*) FROM people GROUP BY age + 1", pgerror.GroupingError, "GROUP BY", nil},
		{"group by unit", "SELECT id, COUNT(*) FROM people GROUP BY id", pgerror.InsufficientPrivilege, `"id"`, nil},
		{"too many groups", "SELECT age, sex, COUNT(*) FROM people GROUP BY age, sex", pgerror.ProgramLimitExceeded, "max_groups", func(p *ir.Policy) { p.MaxGroups = 100 }},
		{"catalog", "SELECT COUNT(*) FROM pg_catalog.pg_class", pgerror.FeatureNotSupported, "catalog", nil},
		{"psql describe", `SELECT c.oid, n.nspname, c.relname FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.relname OPERATOR(pg_catalog.~) '^(people)$' COLLATE pg_catalog.default`, pgerror.FeatureNotSupported, "catalog", nil},
		{"no from", "SELECT COUNT(*)", pgerror.SyntaxError, "FROM", nil},
		{"garbage", "SELEC COUNT(*) FROM people", pgerror.SyntaxError, "syntax", nil},
		{"boolean comparison", "SELECT COUNT(*) FROM people WHERE suburb = true", pgerror.DatatypeMismatch, "boolean", nil},
		{"threshold with less than", "SELECT COUNT(*) < 4242 FROM people", pgerror.FeatureNotSupported, "threshold", nil},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if seen[tc.sql] {
				t.Fatalf("duplicate input %q", tc.sql)
			}
			seen[tc.sql] = true
			_, err := Parse(tc.sql, nil, testCatalog(tc.policy))
			var pe *pgerror.Error
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) error = %v, want a *pgerror.Error", tc.sql, err)
			}
			if pe.Code != tc.code {
				t.Errorf("SQLSTATE = %s (%s), want %s", pe.Code, pe.Message, tc.code)
			}
			if !strings.Contains(pe.Message, tc.mention) {
				t.Errorf("message %q does not name %q", pe.Message, tc.mention)
			}
			for _, value := range []string{"Zanzibar", "4242"} {
				if strings.Contains(pe.Message, value) {
					t.Errorf("message %q echoes the value %s", pe.Message, value)
				}
			}
		})
	}
	if len(tests) < 25 {
		t.Fatalf("only %d refusals in the table", len(tests))
	}
}

func str(s string) *string { return &s }

func TestParseAccepted(t *testing.T) {
	lit := func(n int64) ir.Literal { return ir.Literal{Kind: ir.LitInt, Int: n} }
	text := func(s string) ir.Literal { return ir.Literal{Kind: ir.LitText, Text: s} }
	tests := []struct {
		name   string
		sql    string
		args   []*string
		policy func(*ir.Policy)
		want   ir.Statement
	}{
		{"count star", "SELECT COUNT(*) FROM people;", nil, nil,
			&ir.Query{Table: "people", Alias: "count"}},
		{"schema public", `SELECT COUNT(*) FROM public.people WHERE people.age > 30`, nil, nil,
			&ir.Query{Table: "people", Alias: "count", Where: &ir.Compare{Column: "age", Op: ">", Value: lit(30)}}},
		{"count one, alias, case", "select Count(1) AS N from PEOPLE", nil, nil,
			&ir.Query{Table: "people", Alias: "n"}},
		{"count distinct unit", "SELECT COUNT(DISTINCT id) FROM people", nil, nil,
			&ir.Query{Table: "people", Agg: ir.CountDistinct, Alias: "count"}},
		{"threshold gt", "SELECT COUNT(*) > 10 FROM people", nil, nil,
			&ir.Query{Table: "people", Alias: "count", Threshold: &ir.Threshold{Bound: 10}}},
		{"threshold ge negative", "SELECT COUNT(*) >= -3 FROM people", nil, nil,
			&ir.Query{Table: "people", Alias: "count", Threshold: &ir.Threshold{Bound: -4}}},
		{"group and order", "SELECT sex, age, COUNT(*) FROM people GROUP BY age, sex ORDER BY age DESC, sex", nil, nil,
			&ir.Query{Table: "people", Alias: "count", GroupBy: []string{"sex", "age"}, OrderBy: []ir.Order{{Column: "age", Desc: true}, {Column: "sex"}}}},
		{"flipped literal", "SELECT COUNT(*) FROM people WHERE 30 < age", nil, nil,
			&ir.Query{Table: "people", Alias: "count", Where: &ir.Compare{Column: "age", Op: ">", Value: lit(30)}}},
		{"every predicate", "SELECT COUNT(*) FROM people WHERE (age BETWEEN 1 AND 9 OR age NOT IN (3, -4)) AND NOT suburb IS NULL AND sex != 'F' AND score >= 2", nil, nil,
			&ir.Query{Table: "people", Alias: "count", Where: &ir.And{
				Left: &ir.And{
					Left: &ir.And{
						Left:  &ir.Or{Left: &ir.Between{Column: "age", Lo: lit(1), Hi: lit(9)}, Right: &ir.In{Column: "age", Values: []ir.Literal{lit(3), lit(-4)}, Negate: true}},
						Right: &ir.Not{Inner: &ir.IsNull{Column: "suburb"}}},
					Right: &ir.Compare{Column: "sex", Op: "<>", Value: text("F")}},
				Right: &ir.Compare{Column: "score", Op: ">=", Value: ir.Literal{Kind: ir.LitFloat, Float: 2}}}}},
		{"like allowed", "SELECT COUNT(*) FROM people WHERE suburb NOT LIKE 'a%'", nil, func(p *ir.Policy) { p.AllowLike = true },
			&ir.Query{Table: "people", Alias: "count", Where: &ir.Like{Column: "suburb", Pattern: "a%", Negate: true}}},
		{"math allowed", "SELECT COUNT(*) FROM people WHERE abs(age - 40) < 5", nil, func(p *ir.Policy) { p.AllowMath = true },
			&ir.Query{Table: "people", Alias: "count", Where: &ir.MathCompare{Op: "<", Value: lit(5),
				Expr:  &ir.FuncCall{Name: "abs", Args: []ir.Expr{&ir.BinaryExpr{Op: "-", Left: &ir.ColumnRef{Column: "age"}, Right: &ir.NumberLit{Value: lit(40)}}}},
				Guard: &ir.Between{Column: "age", Lo: lit(0), Hi: lit(120)}}}},
		{"strict equalities", "SELECT COUNT(*) FROM people WHERE sex = 'F' AND age = 30", nil, func(p *ir.Policy) { p.Strict = true },
			&ir.Query{Table: "people", Alias: "count", Where: &ir.And{Left: &ir.Compare{Column: "sex", Op: "=", Value: text("F")}, Right: &ir.Compare{Column: "age", Op: "=", Value: lit(30)}}}},
		{"unit allowed in where", "SELECT COUNT(*) FROM people WHERE id = 7", nil, func(p *ir.Policy) { p.UnitInWhere = true },
			&ir.Query{Table: "people", Alias: "count", Where: &ir.Compare{Column: "id", Op: "=", Value: lit(7)}}},
		{"bound parameters", "SELECT COUNT(*) FROM people WHERE age > $1 AND suburb = $2", []*string{str("40"), str("it's $1")}, nil,
			&ir.Query{Table: "people", Alias: "count", Where: &ir.And{Left: &ir.Compare{Column: "age", Op: ">", Value: lit(40)}, Right: &ir.Compare{Column: "suburb", Op: "=", Value: text("it's $1")}}}},
		{"dollar inside a string is text", "SELECT COUNT(*) FROM people WHERE suburb = '$1'", nil, nil,
			&ir.Query{Table: "people", Alias: "count", Where: &ir.Compare{Column: "suburb", Op: "=", Value: text("$1")}}},
		{"set equals", "SET epsilon = 0.5", nil, nil, &ir.Set{Name: "epsilon", Value: "0.5"}},
		{"set to quoted", "set application_name TO 'psql'", nil, nil, &ir.Set{Name: "application_name", Value: "psql"}},
		{"set session list", "SET SESSION DateStyle = ISO, MDY", nil, nil, &ir.Set{Name: "datestyle", Value: "ISO, MDY"}},
		{"set time zone", "SET TIME ZONE 'UTC'", nil, nil, &ir.Set{Name: "timezone", Value: "UTC"}},
		{"show", "SHOW budget;", nil, nil, &ir.Show{Name: "budget"}},
		{"show all", "SHOW ALL", nil, nil, &ir.Show{Name: "all"}},
		{"version", "SELECT version()", nil, nil, &ir.Chatter{Kind: "version"}},
		{"current_setting", "select current_setting('server_version_num')", nil, nil, &ir.Chatter{Kind: "current_setting", Value: "server_version_num"}},
		{"begin", "BEGIN", nil, nil, &ir.Chatter{Kind: "begin"}},
		{"empty", " ; ", nil, nil, &ir.Chatter{Kind: "empty"}},
		{"comment only", "-- ping", nil, nil, &ir.Chatter{Kind: "empty"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.sql, tc.args, testCatalog(tc.policy))
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.sql, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse(%q) =\n%#v\nwant\n%#v", tc.sql, got, tc.want)
			}
		})
	}
}

func TestParameters(t *testing.T) {
	cat := testCatalog(nil)
	types, err := DescribeParams("SELECT COUNT(*) FROM people WHERE age > $1 AND suburb = $2 AND score < $3", cat)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(types, []pgtypes.OID{pgtypes.Int8, pgtypes.Text, pgtypes.Float8}) {
		t.Errorf("DescribeParams = %v", types)
	}
	refusals := []struct {
		sql  string
		args []*string
		code pgerror.Code
	}{
		{"SELECT COUNT(*) FROM people WHERE age > $1", []*string{str("forty-two")}, pgerror.InvalidTextRepresentation},
		{"SELECT COUNT(*) FROM people WHERE age > $1", []*string{str("30.5")}, pgerror.InvalidTextRepresentation},
		{"SELECT COUNT(*) FROM people WHERE age > $1", []*string{str("9223372036854775808")}, pgerror.NumericValueOutOfRange},
		{"SELECT COUNT(*) FROM people WHERE age > $1 + 1", []*string{nil}, pgerror.FeatureNotSupported},    // arithmetic needs allow_math
		{"SELECT COUNT(*) FROM people WHERE age > $2", []*string{str("1")}, pgerror.IndeterminateDatatype}, // $1 has no type
		{"SELECT COUNT(*) FROM people WHERE age > $0", []*string{str("1")}, pgerror.SyntaxError},
	}
	for _, r := range refusals {
		_, err := Parse(r.sql, r.args, cat)
		var pe *pgerror.Error
		if !errors.As(err, &pe) || pe.Code != r.code {
			t.Errorf("Parse(%q, %v) error = %v, want SQLSTATE %s", r.sql, r.args, err, r.code)
		}
		if pe != nil && strings.Contains(pe.Message, "forty-two") {
			t.Errorf("message %q echoes the bound value", pe.Message)
		}
	}
}
