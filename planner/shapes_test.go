package planner

import (
	"countwall/ir"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"

	"countwall/pgerror"
)

// ownParse parses a statement from its own text, never through a shape.
func ownParse(sql string, args []*string, cat *ir.Catalog) (ir.Statement, error) {
	return (&parser{cat: cat, args: args, bind: true, ownText: true}).statement(sql)
}

// sameParse fails the test unless parsing sql through its shape gives what
// parsing its own text gives: the same statement, or the same error.
func sameParse(t *testing.T, sql string, args []*string, cat *ir.Catalog) {
	t.Helper()
	want, wantErr := ownParse(sql, args, cat)
	got, err := Parse(sql, args, cat)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) || pgerror.SQLState(err) != pgerror.SQLState(wantErr) {
		t.Fatalf("%s\nthrough its shape: error %v\nfrom its own text: error %v", sql, err, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s\nthrough its shape: %#v\nfrom its own text: %#v", sql, got, want)
	}
}

// shapeCorpus are statements chosen for the places where a constant and a
// value argument might part ways: signs folded into numbers, every number
// form, strings with quotes and backslashes, constants where the grammar
// takes no value argument, constants the planner reads (COUNT(1), LIMIT,
// current_setting), and $n parameters beside constants.
var shapeCorpus = []string{
	"SELECT COUNT(*) FROM people WHERE age = 30",
	"SELECT COUNT(*) FROM people WHERE age = -30 AND income > - 5 AND income < +7 AND age <> - -3",
	"SELECT COUNT(*) >= -3 FROM people",
	"SELECT COUNT(*) > 10 FROM people WHERE sex = 'F'",
	"SELECT COUNT(*) FROM people WHERE score > 1e3 OR score < .5 OR score = 5. OR score = 2.5e-3 OR age < 0x1F",
	"SELECT COUNT(*) FROM people WHERE age = 9223372036854775808",
	"SELECT COUNT(*) FROM people WHERE age = 007",
	"SELECT COUNT(*) FROM people WHERE suburb = 'it''s' OR suburb = 'back\\slash' OR suburb = '' OR suburb = '%_$1'",
	"SELECT COUNT(*) FROM people WHERE suburb LIKE 'a!%%' ESCAPE '!'",
	"SELECT COUNT(*) FROM people WHERE suburb NOT LIKE '%x'",
	"SELECT COUNT(*) FROM people WHERE age = '40' AND income = ' 12 '",
	"SELECT COUNT(*) FROM people WHERE age = 'forty'",
	"SELECT COUNT(*) FROM people WHERE sex = 3",
	"SELECT COUNT(*) FROM people WHERE age = 'NaN' OR score < 'Infinity'",
	"SELECT COUNT(*) FROM people WHERE 30 < age AND 'F' = sex",
	"SELECT COUNT(*) FROM people WHERE age BETWEEN 1 AND 9 OR age NOT BETWEEN -2 AND 4",
	"SELECT COUNT(*) FROM people WHERE age IN (1, 2, -3, 4) AND sex NOT IN ('F', 'M')",
	"SELECT COUNT(*) FROM people WHERE abs(age - 40) < 5 AND income * 2 > 10 AND age % 7 = 1",
	"SELECT COUNT(1) FROM people WHERE age > 3",
	"SELECT COUNT(2) FROM people",
	"SELECT COUNT(*) AS 'c' FROM people WHERE age > 3",
	"SELECT COUNT(*) AS c FROM people AS 'p' WHERE age > 3",
	"SELECT COUNT(*) FROM people WHERE age > 3 LIMIT 5",
	"SELECT sex, COUNT(*) FROM people WHERE age > 3 GROUP BY 1",
	"SELECT sex, COUNT(*) FROM people WHERE age > 3 GROUP BY sex HAVING COUNT(*) > 4",
	"SELECT sex, COUNT(*) FROM people WHERE age > 3 GROUP BY sex ORDER BY 1",
	"SELECT 1", "SELECT 'x'", "select current_setting('server_version_num')", "SELECT version()",
	"SET epsilon = 0.5", "SET TIME ZONE 'UTC'",
	"SELECT COUNT(*) FROM people WHERE id = 7",
	"SELECT COUNT(*) FROM people WHERE age > $1 AND sex = 'F' AND suburb = $2 AND income < 5",
	"SELECT COUNT(*) FROM people WHERE age IN (SELECT 3)",
	"SELECT COUNT(*) FROM people WHERE age = 1 AND age = 1 AND age = 1",
	"SELECT COUNT(*) FROM people WHERE age = (1)",
	"SELECT COUNT(*) FROM people WHERE age = -(1)",
	"SELECT COUNT(*) FROM people WHERE suburb = 'a' 'b'",
	"SELECT COUNT(*) FROM people WHERE age > 3 ; SELECT 4",
}

func TestShapeParseEqualsOwnText(t *testing.T) {
	cat := testCatalog(func(p *ir.Policy) { p.AllowLike, p.AllowMath, p.UnitInWhere = true, true, true })
	args := []*string{str("40"), str("it's")}
	for _, sql := range shapeCorpus {
		for range 2 { // first through a new shape, then through the cached one
			sameParse(t, sql, args, cat)
		}
	}
}

// randomStatement is a statement over testCatalog's people table with random
// constants of every kind in random places, some of the wrong type.
func randomStatement(r *rand.Rand) string {
	number := func() string {
		n := []string{fmt.Sprint(r.IntN(200)), fmt.Sprint(-r.IntN(50)), "- " + fmt.Sprint(r.IntN(9)),
			fmt.Sprintf("%d.%d", r.IntN(90), r.IntN(10)), fmt.Sprintf("%de%d", r.IntN(9), r.IntN(3)), "." + fmt.Sprint(r.IntN(99))}
		return n[r.IntN(len(n))]
	}
	text := func() string {
		var b strings.Builder
		b.WriteByte('\'')
		for range r.IntN(6) {
			switch c := "ab'\\%_ $1é"[r.IntN(11)]; c {
			case '\'':
				b.WriteString("''")
			default:
				b.WriteByte(c)
			}
		}
		b.WriteByte('\'')
		return b.String()
	}
	constant := func() string {
		if r.IntN(3) == 0 {
			return text()
		}
		return number()
	}
	columns := []string{"age", "sex", "suburb", "income", "score"}
	var pred func(depth int) string
	pred = func(depth int) string {
		col := columns[r.IntN(len(columns))]
		switch k := r.IntN(9); {
		case depth > 0 && k == 0:
			return "(" + pred(depth-1) + " AND " + pred(depth-1) + ")"
		case depth > 0 && k == 1:
			return pred(depth-1) + " OR " + pred(depth-1)
		case depth > 0 && k == 2:
			return "NOT (" + pred(depth-1) + ")"
		case k == 3:
			return col + " BETWEEN " + constant() + " AND " + constant()
		case k == 4:
			list := []string{constant()}
			for range r.IntN(5) {
				list = append(list, constant())
			}
			return col + " IN (" + strings.Join(list, ", ") + ")"
		case k == 5:
			return col + " LIKE " + text()
		case k == 6:
			return "abs(" + col + " - " + number() + ") < " + number()
		case k == 7:
			return constant() + " " + []string{"<", "=", ">="}[r.IntN(3)] + " " + col
		default:
			return col + " " + []string{"=", "<>", "<", "<=", ">", ">=", "!="}[r.IntN(7)] + " " + constant()
		}
	}
	sql := "SELECT COUNT(*)"
	if r.IntN(4) == 0 {
		sql += " > " + number()
	}
	sql += " FROM people WHERE " + pred(3)
	if r.IntN(4) == 0 {
		sql += " GROUP BY sex"
	}
	return sql
}

// 3,000 random statements, each parsed through its shape (new or cached)
// and from its own text.
func TestShapeParseEqualsOwnTextRandom(t *testing.T) {
	cat := testCatalog(func(p *ir.Policy) { p.AllowLike, p.AllowMath = true, true })
	r := rand.New(rand.NewPCG(14, 14))
	for range 3000 {
		sameParse(t, randomStatement(r), nil, cat)
	}
}

// Sessions parsing statements of one shape at once each get their own
// constants: 8 goroutines, 300 statements each (run with -race).
func TestShapeConstantsStayWithTheirStatement(t *testing.T) {
	cat := testCatalog(nil)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				sql := fmt.Sprintf("SELECT COUNT(*) FROM people WHERE age IN (%d, %d) AND suburb = 's%d'", g, i, g*1000+i)
				got, err := Parse(sql, nil, cat)
				want, _ := ownParse(sql, nil, cat)
				if err != nil || !reflect.DeepEqual(got, want) {
					errs <- fmt.Sprintf("%s: got %#v, %v", sql, got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// The cache holds at most maxShapes shapes, however many a client sends.
func TestShapeCacheIsBounded(t *testing.T) {
	cat := testCatalog(nil)
	for i := range maxShapes + 10 {
		// A shape per pair of IN-list lengths.
		sql := fmt.Sprintf("SELECT COUNT(*) FROM people WHERE age IN (%s2) AND income IN (%s%d)",
			strings.Repeat("1, ", i%40), strings.Repeat("3, ", i/40), i)
		if _, err := Parse(sql, nil, cat); err != nil {
			t.Fatal(err)
		}
	}
	shapes.mu.Lock()
	n := len(shapes.shapes)
	shapes.mu.Unlock()
	if n > maxShapes || n == 0 {
		t.Errorf("%d shapes cached, want 1..%d", n, maxShapes)
	}
}
