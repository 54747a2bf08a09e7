package attacks_test

import (
	"context"
	"database/sql"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"countwall/attacks"
	"countwall/dataset"
)

// sumPeople is the people table the sum attacks are tested on: 2,000 people
// (seed 1). Its 8 students of suburb_0011 earn 17,000 between them, 11,800
// of it person 13's and 5,200 person 717's; its 21 managers of suburb_0001
// earn 2,836,700.
func sumPeople(t testing.TB) string {
	t.Helper()
	return sharedDB(t, "sum-people.db", func(path string) error {
		return dataset.GeneratePeople(context.Background(), path, dataset.PeopleOptions{Rows: 2000, Seed: 1}, dataset.WriteOptions{})
	})
}

// sumTables declares income's public bounds, which every mechanism that
// answers sums needs.
const sumTables = peopleTables + "    bounds:\n      income: {min: 0, max: 500000}\n      hours: {min: 1, max: 100}\n"

const (
	studentsWhere = "suburb = 'suburb_0011' AND occupation = 'student'"
	managersWhere = "suburb = 'suburb_0001' AND occupation = 'managers'"
)

// Under exact the cell is published and the two sums differ by it exactly, and the
// attacker, earning 5,200 of it, has the largest contribution: 11,800.
func TestSumDifferencingUnderExact(t *testing.T) {
	for _, tc := range []struct {
		own             string
		largest         float64
		wantLargestRead bool
	}{
		{"", 0, false},
		{"id = 717", 11800, true},
	} {
		q := engineOver(t, sumPeople(t), "exact", "", sumTables, "")
		o := attacks.SumDifferencing.Demo()
		o.Target.Where, o.Background = studentsWhere, sumPeople(t)
		o.Params.(*attacks.SumDifferencingParams).Own = tc.own
		res, err := attacks.Execute(context.Background(), attacks.SumDifferencing, q, o, sumPeople(t))
		if err != nil {
			t.Fatalf("--own %q: %v", tc.own, err)
		}
		if res.Recovered != 17000 || !*res.Exact || res.Queries != 3 || res.Refused != 0 || res.Details["cell_withheld"] != false {
			t.Errorf("--own %q: recovered %d (exact %v) in %d queries, %d refused, cell withheld %v; want 17000 exactly in 3, the cell published",
				tc.own, res.Recovered, *res.Exact, res.Queries, res.Refused, res.Details["cell_withheld"])
		}
		est, ok := res.Details["largest_estimate"].(float64)
		if ok != tc.wantLargestRead || est != tc.largest || ok && res.Details["largest_relative_error"] != 0.0 {
			t.Errorf("--own %q: largest %v (%v), relative error %v; want %v", tc.own, est, ok, res.Details["largest_relative_error"], tc.largest)
		}
		if !strings.Contains(res.Target, "SUM(income)") {
			t.Errorf("target %q is not the sum", res.Target)
		}
	}
}

// sumOptions are an attack's demo options moved to the test table.
func sumOptions(t *testing.T, a *attacks.Attack) attacks.Options {
	o := a.Demo()
	o.Background = sumPeople(t)
	switch p := o.Params.(type) {
	case *attacks.SumDifferencingParams:
		o.Target.Where, p.Own = studentsWhere, "id = 717"
	case *attacks.SumAveragingParams:
		o.Target.Where = managersWhere
	case *attacks.SplitParams:
		o.Target.Where, p.Rewrites, p.Splits = managersWhere, nil, 10
	case *attacks.LinearParams:
		o.Target = attacks.Target{Table: "people", Where: "suburb = 'suburb_0001' AND age BETWEEN 20 AND 60", Sum: "hours"}
		p.Key, p.Min, p.Max, p.Grain = "age", 1, 100, 1
	}
	return o
}

// truthQuerier answers the attacks' SQL from the truth database, with noise
// added: fresh (a new draw per answer) or sticky (seeded by the SQL text).
// It stands in for a mechanism with a known noise scale.
type truthQuerier struct {
	db     *sql.DB
	sd     float64
	sticky bool
	rng    *rand.Rand
}

func openTruth(t *testing.T, sd float64, sticky bool) *truthQuerier {
	db, err := sql.Open("sqlite", "file:"+sumPeople(t)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &truthQuerier{db: db, sd: sd, sticky: sticky, rng: rand.New(rand.NewPCG(7, 8))}
}

func (q *truthQuerier) Query(ctx context.Context, text string) (*attacks.Rows, error) {
	var v sql.NullFloat64
	if err := q.db.QueryRowContext(ctx, text).Scan(&v); err != nil {
		return nil, err
	}
	rng := q.rng
	if q.sticky {
		h := fnv.New64a()
		h.Write([]byte(text))
		rng = rand.New(rand.NewPCG(h.Sum64(), 1))
	}
	return &attacks.Rows{Columns: []string{"sum"}, Values: [][]string{{strconv.FormatFloat(v.Float64+q.sd*rng.NormFloat64(), 'f', -1, 64)}}}, nil
}

// Fresh noise of sd 300 averages to within half the grain (50) after
// (3 x 300 / 50)^2 = 324 answers: the seeded run stops there and rounds to
// the truth.
func TestSumAveragingOverFreshNoise(t *testing.T) {
	o := sumOptions(t, attacks.SumAveraging)
	res, err := attacks.Execute(context.Background(), attacks.SumAveraging, &attacks.Logged{Querier: openTruth(t, 300, false)}, o, sumPeople(t))
	if err != nil {
		t.Fatal(err)
	}
	se := res.Details["standard_error"].(float64)
	t.Logf("%d queries, estimate %.1f, standard error %.1f", res.Queries, res.Estimate, se)
	if res.Recovered != 2836700 || !*res.Exact {
		t.Errorf("recovered %d, want 2836700", res.Recovered)
	}
	if res.Queries < 250 || res.Queries > 420 || 3*se >= 50 {
		t.Errorf("%d queries, standard error %.1f: want about 324 and 3 se < 50", res.Queries, se)
	}
}

// Sticky noise does not average by repetition (every answer is the same),
// but split-averaging's pairs carry new noise per split: the mean of 50
// pair sums has a standard error of sqrt(2) x 300 / sqrt(50) = 60, so the
// error stays below 4 standard errors, while one answer repeated keeps its
// whole error.
func TestSumSplitAveragingOverStickyNoise(t *testing.T) {
	ctx := context.Background()
	o := sumOptions(t, attacks.SumSplitAveraging)
	o.Params.(*attacks.SplitParams).Splits = 50
	res, err := attacks.Execute(ctx, attacks.SumSplitAveraging, &attacks.Logged{Querier: openTruth(t, 300, true)}, o, sumPeople(t))
	if err != nil {
		t.Fatal(err)
	}
	errAbs := math.Abs(res.Details["error"].(float64))
	t.Logf("%d queries, error %.1f", res.Queries, errAbs)
	if res.Queries != 100 || errAbs > 4*60 {
		t.Errorf("%d queries, error %.1f: want 100 and an error below 240", res.Queries, errAbs)
	}
	rep, err := attacks.Execute(ctx, attacks.SumAveraging, &attacks.Logged{Querier: openTruth(t, 300, true)}, sumOptions(t, attacks.SumAveraging), sumPeople(t))
	if err != nil {
		t.Fatal(err)
	}
	if se := rep.Details["standard_error"].(float64); se != 0 || rep.Queries != 30 {
		t.Errorf("repeating under sticky noise: standard error %v after %d queries, want 0 after 30", se, rep.Queries)
	}
}

// linear-reconstruction --sum recovers the hours of every age among the
// 164 people of suburb_0001 aged 20 to 60 (41 ages) from exact subset sums,
// and, as the noise grows, needs queries per person in proportion to its
// variance: the error per unknown is about 2 sd / sqrt(m). Seeded: the
// counts are exact.
func TestLinearReconstructionOfASum(t *testing.T) {
	if testing.Short() {
		t.Skip("solves least squares over thousands of subset sums: skipped under -short; go test ./... runs it")
	}
	for _, tc := range []struct {
		sd          float64
		mPerN       float64
		solver      string
		right, of   int
		maxAbsError float64
	}{
		{0, 2, "lsq", 41, 41, 0},
		{0, 1, "lp", 41, 41, 0},    // gonum's dense simplex: 30 s at m/n = 2
		{8, 4, "lsq", 23, 41, 0.5}, // 2 sd / sqrt(m) = 0.62: P(|e| < 1/2) = 0.58
		{4, 8, "lsq", 40, 41, 0.1}, // 0.22: P = 0.98
	} {
		o := sumOptions(t, attacks.LinearReconstruction)
		p := o.Params.(*attacks.LinearParams)
		p.MPerN, p.Solver = tc.mPerN, tc.solver
		res, err := attacks.Execute(context.Background(), attacks.LinearReconstruction, &attacks.Logged{Querier: openTruth(t, tc.sd, false)}, o, sumPeople(t))
		if err != nil {
			t.Fatal(err)
		}
		mae := res.Details["mean_abs_error"].(float64)
		t.Logf("%.1fs: sd %g, %g queries per person (%d), %s: %d of %d values, mean abs error %.2f, residual rms %.2f", res.Seconds,
			tc.sd, tc.mPerN, res.Queries, tc.solver, *res.CellsExact, res.CellsTotal, mae, res.Details["residual_rms"])
		if res.CellsTotal != tc.of || *res.CellsExact != tc.right || mae > tc.maxAbsError {
			t.Errorf("sd %g, m/n %g, %s: %d of %d values, mean abs error %.2f; want %d of %d, error at most %g",
				tc.sd, tc.mPerN, tc.solver, *res.CellsExact, res.CellsTotal, mae, tc.right, tc.of, tc.maxAbsError)
		}
	}
}
