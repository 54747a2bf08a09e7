package planner

import (
	"database/sql"
	"math"
	"path/filepath"
	"testing"

	"countwall/internal/pgtest"
	"countwall/ir"
	"countwall/pgtypes"
	"countwall/planner/plan"
	"countwall/planner/snapshot"
)

// The NULL-heavy table: a third of the ages, a quarter of the scores and a
// third of the labels are NULL, and the values sit at the edges where
// PostgreSQL's comparisons differ from naive ones (the int64 extremes,
// integers a float8 or a float4 cannot hold, -0, the smallest denormal,
// 1e300, the float4 nearest 0.1, trailing spaces).
//
//	id  age                   score                          label
var nullRows = [][]any{
	{1, nil, nil, nil},
	{2, nil, 0.1, "a"},
	{3, nil, math.Copysign(0, -1), nil},
	{4, nil, nil, "b"},
	{5, nil, 5e-324, "ab"},
	{6, nil, 1e300, nil},
	{7, 0, nil, "a"},
	{8, 0, 0.0, ""},
	{9, 1, -1e300, "B"},
	{10, 30, 30.5, nil},
	{11, 30, nil, "c"},
	{12, 31, 30.0, "ab  "},
	{13, -5, 0.1, "x"},
	{14, 100, 100.0, nil},
	{15, int64(math.MaxInt64), 9.223372036854776e18, "y"},
	{16, int64(math.MinInt64), nil, "z"},
	{17, 9007199254740993, 9007199254740992.0, nil},
	{18, 16777217, 16777216.0, "a"},
	{19, 16777216, float64(float32(0.1)), "abc"},
	{20, 2, 2.5, nil},
}

// nullsCatalog is the catalog of the NULL-heavy table "m", which allows
// every construct a case uses.
func nullsCatalog() *ir.Catalog {
	pol := ir.DefaultPolicy()
	pol.AllowLike = true
	return &ir.Catalog{Tables: map[string]*ir.Table{"m": {Name: "m", PrivacyUnit: "id", Policy: pol,
		Columns: map[string]*ir.Column{
			"id":    {Name: "id", Type: ir.TypeInt},
			"age":   {Name: "age", Type: ir.TypeInt},
			"score": {Name: "score", Type: ir.TypeReal},
			"label": {Name: "label", Type: ir.TypeText},
		}}}}
}

// nullCase is a WHERE clause, its bound parameters (text form) when it
// has some with the types their client declared (none: unspecified), and
// the count PostgreSQL 15 gives over nullRows.
type nullCase struct {
	where string
	args  []string
	want  int64
	types []pgtypes.OID
}

// nullCases were each answered by PostgreSQL 15 over the same rows.
var nullCases = []nullCase{
	// A comparison no integer satisfies is unknown for a NULL age, so its
	// NOT counts the 14 ages that are not NULL, and no NULL one.
	{"age = 30.5", nil, 0, nil},
	{"NOT (age = 30.5)", nil, 14, nil},
	{"NOT (age = 30.5) AND age IS NULL", nil, 0, nil},
	{"NOT (age = 30.5) OR age IS NULL", nil, 20, nil},
	{"age <> 30.5", nil, 14, nil},
	{"NOT (age <> 30.5)", nil, 0, nil},
	{"age < 9223372036854775808", nil, 14, nil},
	{"NOT (age < 9223372036854775808)", nil, 0, nil},
	{"NOT (age >= 9223372036854775808)", nil, 14, nil},
	{"NOT (age > -9223372036854775809)", nil, 0, nil},
	{"age IN (1e400)", nil, 0, nil},
	{"NOT (age IN (1e400))", nil, 14, nil},
	{"NOT (age NOT IN (30.5))", nil, 0, nil},
	{"NOT (age IN (30.5, 0))", nil, 12, nil},
	{"NOT (age = 30.5 OR label = 'a')", nil, 8, nil},
	{"NOT (age = 30.5 AND label = 'a')", nil, 16, nil},
	{"NOT (age BETWEEN 30.5 AND 30.6)", nil, 14, nil},
	{"NOT (age NOT BETWEEN 30.5 AND 30.6)", nil, 0, nil},
	{"NOT (age BETWEEN -1e30 AND 1e30)", nil, 0, nil},
	{"age NOT BETWEEN -1e30 AND 1e30", nil, 0, nil},
	{"NOT (age NOT BETWEEN -1e30 AND 0.5)", nil, 4, nil},
	{"NOT (NOT (age = 30.5))", nil, 0, nil},
	// Decimals beyond a double's reach are exact against integers;
	// numeric's own limits hold (16383 decimals, 10^131071).
	{"age = 30.00000000000000000001", nil, 0, nil},
	{"NOT (age > 29.99999999999999999999)", nil, 6, nil},
	{"age = 9007199254740993.0", nil, 1, nil},
	{"age = 1e-16383", nil, 0, nil},
	{"NOT (age = 1e-16383)", nil, 14, nil},
	{"age <= 1e131071", nil, 14, nil},
	{"age = 0e1000000000", nil, 2, nil},
	{"age IN (0.0, 1e-16383, 30.5, 2.0)", nil, 3, nil},
	{"age BETWEEN -0.5 AND 2.5", nil, 4, nil},
	// A double precision column: -0 equals 0, the smallest denormal and
	// 1e300 are values like any other, NaN is above every number and
	// equal to itself, and the infinities order as numbers.
	{"score = 0", nil, 2, nil},
	{"score = -0.0", nil, 2, nil},
	{"score > 0", nil, 12, nil},
	{"score = 5e-324", nil, 1, nil},
	{"score = 2.4703282292062328e-324", nil, 1, nil},
	{"score < 1e-300 AND score > 0", nil, 1, nil},
	{"score >= 1e300", nil, 1, nil},
	{"score = 0.1", nil, 2, nil},
	{"score = 9223372036854775807", nil, 1, nil},
	{"score = 9007199254740993", nil, 1, nil},
	{"score < 'NaN'", nil, 15, nil},
	{"score <= 'NaN'", nil, 15, nil},
	{"score = 'NaN'", nil, 0, nil},
	{"score > 'NaN'", nil, 0, nil},
	{"NOT (score > 'NaN')", nil, 15, nil},
	{"score <> 'nan'", nil, 15, nil},
	{"score < 'Infinity'", nil, 15, nil},
	{"score > '-inf'", nil, 15, nil},
	{"score = '0x1p-1074'", nil, 1, nil},
	{"score BETWEEN 0 AND 'NaN'", nil, 14, nil},
	{"score NOT BETWEEN 'NaN' AND 'NaN'", nil, 15, nil},
	{"score IN (0.1, 'NaN', 2.5)", nil, 3, nil},
	{"score NOT IN (0.1, 'NaN', 2.5)", nil, 12, nil},
	// Parameters of no declared type take the column's; a declared type
	// is read by its own input and compared as PostgreSQL compares it.
	{"score = $1", []string{"0.1"}, 2, nil},
	{"score = $1", []string{"0.1"}, 1, []pgtypes.OID{pgtypes.Float4}},
	{"score = $1", []string{"0.1"}, 2, []pgtypes.OID{pgtypes.Numeric}},
	{"score < $1", []string{"NaN"}, 15, []pgtypes.OID{pgtypes.Numeric}},
	{"age = $1", []string{"16777217"}, 1, []pgtypes.OID{pgtypes.Float4}},
	{"age = $1", []string{"9007199254740992"}, 1, []pgtypes.OID{pgtypes.Float8}},
	{"age >= $1", []string{"9223372036854775807"}, 1, []pgtypes.OID{pgtypes.Float8}},
	{"NOT (age = $1)", []string{"30.5"}, 14, []pgtypes.OID{pgtypes.Numeric}},
	{"age < $1", []string{"NaN"}, 14, []pgtypes.OID{pgtypes.Float8}},
	{"NOT (age < $1)", []string{"NaN"}, 0, []pgtypes.OID{pgtypes.Numeric}},
	{"age IN ($1, $2)", []string{"16777217", "0"}, 3, []pgtypes.OID{pgtypes.Float4, pgtypes.Int4}},
	{"age IN ($1, 30.0000000000000000001)", []string{"7"}, 2, []pgtypes.OID{pgtypes.Float8}},
	{"age IN ($1, 1.5)", []string{"30.0"}, 2, nil},
	{"label = $1", []string{"ab   "}, 1, []pgtypes.OID{pgtypes.BPChar}},
	{"label = $1", []string{"ab  "}, 1, []pgtypes.OID{pgtypes.Name}},
	{"label = $1", []string{"abc"}, 3, []pgtypes.OID{pgtypes.Char}},
	{"label LIKE $1", []string{"ab  "}, 1, []pgtypes.OID{pgtypes.BPChar}},
	{"age > +$1", []string{"30.5"}, 6, nil},
}

// nullWays are the ways a leaf condition may take in the snapshot.
var nullWays = map[string]snapshot.Way{"listed": snapshot.WayListed, "cuts": snapshot.WayCuts,
	"others": snapshot.WayOthers, "masked": snapshot.WayMasked, "scan": snapshot.WayScan}

// TestNullHeavyCountsOnEveryBackend runs each case through SQLite, the
// snapshot (each way a leaf may take, and the oblivious evaluation) and,
// where a server is at hand, a PostgreSQL store, and wants PostgreSQL's
// count from each; and the count of the rows with a non-NULL label under
// GROUP BY label, so that grouped answers fold the same way.
func TestNullHeavyCountsOnEveryBackend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	writeNullRows(t, path)
	cat := nullsCatalog()
	type backend struct {
		name      string
		opts      plan.StoreOptions
		way       snapshot.Way
		oblivious bool
	}
	backends := []backend{{name: "sqlite", opts: plan.StoreOptions{NoSnapshot: true}}, {name: "snapshot"}, {name: "oblivious", oblivious: true}}
	for name, way := range nullWays {
		backends = append(backends, backend{name: "snapshot-" + name, way: way})
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			defer func(old snapshot.Way) { snapshot.LeafWay = old }(snapshot.LeafWay)
			snapshot.LeafWay = b.way
			s, err := OpenStore(path, b.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			checkNullCases(t, s, cat, !b.opts.NoSnapshot, b.oblivious)
		})
	}
	t.Run("postgres", func(t *testing.T) {
		url := pgtest.Server(t).NewDatabase(t)
		if err := pgtest.ExecURL(url, `CREATE TABLE m (id bigint, age bigint, score double precision, label text)`); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("pgx", url)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range nullRows {
			if _, err := db.Exec(`INSERT INTO m VALUES ($1, $2, $3, $4)`, r...); err != nil {
				t.Fatal(err)
			}
		}
		db.Close()
		s, err := OpenStore(url, plan.StoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		checkNullCases(t, s, cat, false, false)
	})
}

func writeNullRows(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE m (id INTEGER, age INTEGER, score REAL, label TEXT)`); err != nil {
		t.Fatal(err)
	}
	for _, r := range nullRows {
		if _, err := db.Exec(`INSERT INTO m VALUES (?, ?, ?, ?)`, r...); err != nil {
			t.Fatal(err)
		}
	}
}

// checkNullCases runs every case through s: through the snapshot alone
// when snapshot is set.
func checkNullCases(t *testing.T, s *Store, cat *ir.Catalog, snapshot, oblivious bool) {
	t.Helper()
	tbl := cat.Tables["m"]
	for _, c := range nullCases {
		var args []*string
		if c.args != nil {
			args = textArgs(c.args...)
		}
		pr := Prepare("SELECT COUNT(*) FROM m WHERE "+c.where, cat)
		pr.Declare(c.types)
		stmt, err := pr.Bind(args)
		if err != nil {
			t.Errorf("%s %q: %v", c.where, c.args, err)
			continue
		}
		q := stmt.(*ir.Query)
		res, err := runPath(t, s, snapshot, tbl, q, ir.Needs{Oblivious: oblivious}, nil)
		if err != nil {
			t.Errorf("%s %q: %v", c.where, c.args, err)
			continue
		}
		if got := res.Cells[0].Count; got != c.want {
			t.Errorf("%s %q: %d, PostgreSQL counts %d", c.where, c.args, got, c.want)
		}
		// Grouped by label, the cells (the NULL label's among them) add up
		// to the same count.
		gq := *q
		gq.GroupBy = []string{"label"}
		res, err = runPath(t, s, snapshot, tbl, &gq, ir.Needs{Oblivious: oblivious}, nil)
		if err != nil {
			t.Errorf("%s %q GROUP BY label: %v", c.where, c.args, err)
			continue
		}
		var grouped, nullGroup int64
		for _, cell := range res.Cells {
			grouped += cell.Count
			if cell.Group[0].Null {
				nullGroup = cell.Count
			}
		}
		if grouped != c.want {
			t.Errorf("%s %q GROUP BY label: cells add up to %d (%d in the NULL group), PostgreSQL counts %d", c.where, c.args, grouped, nullGroup, c.want)
		}
	}
}

func textArgs(vals ...string) []*string {
	out := make([]*string, len(vals))
	for i := range vals {
		out[i] = &vals[i]
	}
	return out
}
