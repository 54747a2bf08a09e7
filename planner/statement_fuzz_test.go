package planner

import (
	"countwall/ir"
	"countwall/pgerror"
	"errors"
	"testing"
)

// FuzzParse checks that no input makes the parser panic, that every
// refusal is a *pgerror.Error with a five-character SQLSTATE, and that
// parsing through the statement's shape gives what its own text gives.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"SELECT COUNT(*) FROM people",
		"SELECT sex, COUNT(*) FROM people WHERE age BETWEEN 1 AND 9 GROUP BY sex ORDER BY sex DESC",
		"SELECT COUNT(*) > 3 FROM people WHERE suburb IN ('a', 'b') OR NOT age = 3",
		"SELECT COUNT(*) FROM people WHERE age > $1",
		"SET epsilon TO 0.5", "SHOW budget", "SELECT version()", "",
		"SELECT * FROM people; DROP TABLE people",
		"SELECT COUNT(*) FROM people WHERE abs(age - 1) > 'x'",
		"select count(*) from people where (((((age = 1)))))",
		"SELECT COUNT(*) FROM people WHERE suburb = '''",
		`SELECT COUNT(*) FROM people WHERE sex = 'F\' AND suburb = ' OR age >= 0 --'`,
		`SELECT COUNT(*) FROM people WHERE suburb = 'suburb\_0007'`,
		`SELECT COUNT(*) FROM "people" WHERE "sex" = 'F' AND "default" = 'no'`,
		`SELECT COUNT(*) FROM people WHERE default = 'no'`,
		"SELECT COUNT(*) FROM people /* a /* b */ c */ /*! WHERE suburb = 'x' */ # d",
		"SELECT COUNT(*) FROM `people` WHERE sex = \"F\"",
		"SELECT COUNT(*) FROM people WHERE suburb = E'\\x' OR suburb = $$y$$ OR U&\"sex\" = U&'z'",
		"SELECT COUNT(*) FROM people WHERE suburb = 'a'\n'b' -- c",
		"SELECT COUNT(*) FROM people WHERE NOT NOT NOT (age = 'NaN') AND score < 'Infinity' AND age < 0x1F",
		"SET epsilon = '0x1p-3'", "SET delta TO '1_0'", "SET TIME ZONE 'UTC'",
		`SELECT COUNT(*) FROM people WHERE age = $1 AND sex = '$2' AND suburb = $2`,
		"SELECT COUNT(*) AS 'c' FROM people WHERE age = - 5 AND score > 1e3 AND suburb = 'it''s'",
		"SELECT COUNT(*) FROM people WHERE age IN ($1, 1.5, '2') AND NOT (score BETWEEN 'NaN' AND +$2) OR age > -$1",
		"SELECT COUNT(*) FROM people WHERE age = 1e-9999999 OR age < 9.9e131071 OR score = '0x1p-1074' OR score <> -1e400",
	} {
		f.Add(seed)
	}
	cat := testCatalog(func(p *ir.Policy) { p.AllowLike, p.AllowMath = true, true })
	f.Fuzz(func(t *testing.T, sql string) {
		args := []*string{str("1"), str("x")}
		for _, a := range [][]*string{nil, args} {
			sameParse(t, sql, a, cat)
			_, err := Parse(sql, a, cat)
			if err == nil {
				continue
			}
			var pe *pgerror.Error
			if !errors.As(err, &pe) || len(pe.Code) != 5 || pe.Message == "" {
				t.Fatalf("Parse(%q) error %#v is not a complete *pgerror.Error", sql, err)
			}
		}
		DescribeParams(sql, cat) //nolint:errcheck // only panics matter here
	})
}
