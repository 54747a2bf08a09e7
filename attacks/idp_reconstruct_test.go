package attacks_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"countwall/attacks"
	"countwall/dataset"
	"countwall/ir"
	"countwall/proxy"
)

// reconPeople is a small people table (all ten attributes, numeric and
// categorical) for the reconstruction tests.
func reconPeople(t testing.TB) string {
	t.Helper()
	return sharedDB(t, "recon-people.db", func(path string) error {
		return dataset.GeneratePeople(context.Background(), path, dataset.PeopleOptions{Rows: reconRows, Seed: 17}, dataset.WriteOptions{})
	})
}

const reconRows = 400

// peopleSim fronts the small people table, grouped by every attribute, with
// a mechanism behind an Engine on the grouped stand-in.
func peopleSim(t testing.TB, mechanism string, params map[string]any) *standIn {
	t.Helper()
	var names []string
	for _, d := range attacks.PeopleDomains() {
		names = append(names, d.Column)
	}
	cols, groups, err := proxy.GroupsFromSQLite(context.Background(), reconPeople(t), "people", "id", names, []byte("idp-reconstruct"))
	if err != nil {
		t.Fatal(err)
	}
	return openStandIn(t, ir.GroupedTable{Name: "people", Unit: "id", Columns: cols, Groups: groups}, mechanism, params, 23)
}

func allPeople() attacks.Options {
	return attacks.Options{
		Target:    attacks.Target{Table: "people"},
		Threshold: attacks.ThresholdSetup{GroupK: -1},
		Domains:   attacks.SmallDomainsFirst(attacks.PeopleDomains()),
	}
}

// The whole 400-row table, all ten attributes, is recovered exactly as a
// multiset of rows under idp at k = 1 and k = 2 and under exact (k = 0),
// with no search contradicting the model; under idp the ledger's claim is
// exactly the queries answered times the share of 1e-10.
func TestIDPReconstructRecoversTheTable(t *testing.T) {
	if testing.Short() {
		t.Skip("scale: the whole 400-row table rebuilt three times: skipped under -short; go test ./... runs it")
	}
	ctx := context.Background()
	queries := map[string]int{}
	for _, tc := range []struct {
		name      string
		mechanism string
		params    map[string]any
		k         int64
	}{
		{"idp k=1", "idp", map[string]any{"k": 1}, 1},
		{"idp k=2", "idp", map[string]any{"k": 2}, 2},
		{"exact", "exact", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := peopleSim(t, tc.mechanism, tc.params)
			o := allPeople()
			o.Threshold.GroupK = tc.k
			res, err := attacks.Execute(ctx, attacks.IDPReconstruct, &attacks.Logged{Querier: f}, o, reconPeople(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d rows, %d queries (%.1f per person), %d groups, spent %v, per column %v",
				tc.name, res.Recovered, res.Queries, res.Details["queries_per_person"], res.Details["groups"], res.Spent, res.Details["queries_per_column"])
			if res.Recovered != reconRows || !*res.Exact || *res.Success != 1 || *res.CellsExact != reconRows || res.CellsTotal != reconRows {
				t.Fatalf("recovered %d rows, %d of %d matched, success %v, note %q", res.Recovered, *res.CellsExact, res.CellsTotal, *res.Success, res.Note)
			}
			if n := res.Details["inconsistent_searches"]; n != 0 {
				t.Errorf("%v searches contradicted the model", n)
			}
			if res.Note != "" {
				t.Errorf("note %q", res.Note)
			}
			cols, rows := attacks.ReconstructedRows(res)
			if len(cols) != 10 || cols[0] != "sex" || cols[9] != "income" {
				t.Errorf("columns %v: want ten, small domains first", cols)
			}
			var sum int64
			for _, r := range rows {
				sum += r.Count
			}
			if sum != reconRows {
				t.Errorf("rows sum to %d", sum)
			}
			// Threshold queries only: SET epsilon is a session statement,
			// not counted.
			probes := res.Queries
			if tc.k > 0 {
				if want := float64(probes) * attacks.DefaultThresholdEpsilon; math.Abs(res.Spent["idp"]-want) > want*1e-9 {
					t.Errorf("idp claims %g for %d queries, want %g", res.Spent["idp"], probes, want)
				}
			} else {
				// The Engine's SHOW budget lists every kind, spent or not.
				for kind, spent := range res.Spent {
					if spent != 0 {
						t.Errorf("exact charged %g to %s", spent, kind)
					}
				}
			}
			queries[tc.name] = res.Queries
		})
	}
	// Table 4: protection by idp does not make the attack dearer; the
	// ternary search under idp asks fewer queries than the plain binary one.
	if queries["idp k=1"] >= queries["exact"] || queries["idp k=1"] < queries["exact"]/2 {
		t.Errorf("idp asked %d queries, exact %d: want comparable, idp fewer", queries["idp k=1"], queries["exact"])
	}
}

// smallFirewall is a hand-made table over columns a (0..3) and b (0..9):
// rows[a][b] people hold (a, b).
func smallFirewall(t *testing.T, rows [4][10]int64, mechanism string, params map[string]any) *standIn {
	t.Helper()
	var groups []ir.Group
	for a := range rows {
		for b, c := range rows[a] {
			if c > 0 {
				groups = append(groups, ir.Group{Values: []any{int64(a), int64(b)}, Count: c})
			}
		}
	}
	return openStandIn(t, ir.GroupedTable{Name: "t", Columns: []ir.GroupedColumn{{Name: "a", Type: ir.TypeInt}, {Name: "b", Type: ir.TypeInt}}, Groups: groups}, mechanism, params, 5)
}

// The window near the table size: one value of a holds all the rows but
// one, so the counts searched for lie within k of n, where the sensitivity
// of `COUNT(*) > b` is cut off at b = n-1 (Lemma 3.3). The table is still
// recovered exactly for k = 1, 2, 3 and under exact, in the same number of
// queries on every run (the searches depend on the true counts alone; the
// table size is given, so the count is one SET and the probes, two of them
// the domain checks at a = 3 and b = 9, the boundary values that hold rows).
func TestIDPReconstructNearTheTableSize(t *testing.T) {
	ctx := context.Background()
	var rows [4][10]int64
	rows[1] = [10]int64{0, 5, 5, 5, 5, 5, 5, 5, 5, 0} // 40 rows with a = 1
	rows[3][9] = 1                                    // and one with a = 3: n = 41
	want := map[string]int64{"1,1": 5, "1,2": 5, "1,3": 5, "1,4": 5, "1,5": 5, "1,6": 5, "1,7": 5, "1,8": 5, "3,9": 1}
	o := attacks.Options{
		Target:    attacks.Target{Table: "t"},
		Threshold: attacks.ThresholdSetup{Rows: 41},
		Domains:   []attacks.Domain{{Column: "a", Lo: 0, Hi: 3}, {Column: "b", Lo: 0, Hi: 9}},
	}
	for _, tc := range []struct {
		mechanism string
		k         int64
		queries   int
	}{{"exact", 0, 49}, {"idp", 1, 39}, {"idp", 2, 44}, {"idp", 3, 44}} {
		t.Run(fmt.Sprintf("%s k=%d", tc.mechanism, tc.k), func(t *testing.T) {
			var params map[string]any
			if tc.k > 0 {
				params = map[string]any{"k": tc.k}
			}
			f := smallFirewall(t, rows, tc.mechanism, params)
			o.Threshold.GroupK = tc.k
			res, err := attacks.IDPReconstruct.Run(ctx, f, o)
			if err != nil {
				t.Fatal(err)
			}
			_, got := attacks.ReconstructedRows(res)
			m := map[string]int64{}
			for _, r := range got {
				m[strings.Join(r.Values, ",")] += r.Count
			}
			if fmt.Sprint(m) != fmt.Sprint(want) {
				t.Fatalf("recovered %v, want %v", m, want)
			}
			if res.Recovered != 41 || res.Details["inconsistent_searches"] != 0 {
				t.Errorf("recovered %d, %v inconsistent", res.Recovered, res.Details["inconsistent_searches"])
			}
			if n := res.Details["queries"]; n != tc.queries {
				t.Errorf("%v queries (per column %v), want %d", n, res.Details["queries_per_column"], tc.queries)
			}
			if n := res.Details["domain_check_queries"]; n != 2 || res.Details["outside_domain"] != nil {
				t.Errorf("%v domain check queries, found %v: want 2 finding nothing", n, res.Details["outside_domain"])
			}
		})
	}
}

// A domain narrower than the data folds the rows beyond its ends into its
// boundary values. The attack notices: b = 2..7 over a table whose b runs
// 0..9 has 3 rows below 2 and 4 above 7, counted as 2 and 7, and the note
// names the column, the end and the rows, under exact and idp alike. The
// rows it recovered still sum to the table.
func TestIDPReconstructSaysTheDomainIsTooNarrow(t *testing.T) {
	ctx := context.Background()
	var rows [4][10]int64
	rows[0] = [10]int64{1, 0, 2, 0, 0, 0, 0, 0, 0, 3} // b = 0 (1 row) and b = 9 (3 rows) lie outside 2..7
	rows[2] = [10]int64{0, 2, 0, 0, 4, 0, 0, 0, 1, 0} // b = 1 (2) and b = 8 (1) too
	want := []attacks.OutsideDomain{{Column: "b", End: "low", Boundary: "2", Rows: 3}, {Column: "b", End: "high", Boundary: "7", Rows: 4}}
	for _, tc := range []struct {
		mechanism string
		k         int64
	}{{"exact", 0}, {"idp", 1}, {"idp", 2}} {
		t.Run(fmt.Sprintf("%s k=%d", tc.mechanism, tc.k), func(t *testing.T) {
			var params map[string]any
			if tc.k > 0 {
				params = map[string]any{"k": tc.k}
			}
			o := attacks.Options{
				Target:    attacks.Target{Table: "t"},
				Threshold: attacks.ThresholdSetup{Rows: 13, GroupK: tc.k},
				Domains:   []attacks.Domain{{Column: "a", Lo: 0, Hi: 3}, {Column: "b", Lo: 2, Hi: 7}},
			}
			res, err := attacks.IDPReconstruct.Run(ctx, smallFirewall(t, rows, tc.mechanism, params), o)
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(res.Details["outside_domain"]); got != fmt.Sprint(want) {
				t.Errorf("outside the domain: %s, want %v", got, want)
			}
			for _, w := range []string{"the domain of b looks too narrow at its low end: 3 of the target's rows have b below 2 and were counted as 2",
				"at its high end: 4 of the target's rows have b above 7 and were counted as 7", "give a wider --domain"} {
				if !strings.Contains(res.Note, w) {
					t.Errorf("note %q lacks %q", res.Note, w)
				}
			}
			if res.Recovered != 13 {
				t.Errorf("recovered %d rows, want the 13 of the table", res.Recovered)
			}
		})
	}
}

// Against laplace the threshold answers are thresholded noisy counts. At
// the attack's share of 1e-10 each is a coin toss: the attack ends on a
// table of a row or two and recovers none of the 400. At a share of 1 per
// query (noise of scale 1) most answers are right, but enough are wrong that
// the rows come out wrong: the table is not recovered. Either way the run
// ends, says the model does not describe laplace, and is scored.
func TestIDPReconstructFailsAgainstLaplace(t *testing.T) {
	if testing.Short() {
		t.Skip("statistical: reconstructions against seeded laplace noise: skipped under -short; go test ./... runs it")
	}
	ctx := context.Background()
	for _, tc := range []struct {
		share      float64
		maxMatched int
	}{{0, 0}, {1, reconRows / 10}} {
		t.Run(fmt.Sprintf("share %g", tc.share), func(t *testing.T) {
			f := peopleSim(t, "laplace", nil)
			o := allPeople()
			o.Threshold.Epsilon = tc.share
			o.MaxQueries = 100_000
			res, err := attacks.Execute(ctx, attacks.IDPReconstruct, &attacks.Logged{Querier: f}, o, reconPeople(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("laplace: table size found %v, recovered %d rows, %d matched, success %.4f, %d queries, spent %v",
				res.Details["table_size"], res.Recovered, *res.CellsExact, *res.Success, res.Queries, res.Spent)
			if *res.Exact || *res.CellsExact > tc.maxMatched {
				t.Errorf("matched %d of %d rows (success %g): the attack should fail", *res.CellsExact, reconRows, *res.Success)
			}
			if res.Mechanism != "laplace" || res.Spent["dp"] <= 0 || !strings.Contains(res.Note, "runs laplace") {
				t.Errorf("mechanism %q, spent %v, note %q", res.Mechanism, res.Spent, res.Note)
			}
		})
	}
}

// A query limit stops the attack cleanly: it keeps the rows over the columns
// it completed and says where it stopped.
func TestIDPReconstructStopsAtTheQueryLimit(t *testing.T) {
	ctx := context.Background()
	f := peopleSim(t, "idp", nil)
	o := allPeople()
	o.MaxQueries = 400
	res, err := attacks.Execute(ctx, attacks.IDPReconstruct, &attacks.Logged{Querier: f}, o, reconPeople(t))
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := attacks.ReconstructedRows(res)
	if res.Queries != 400 || !strings.Contains(res.Note, "stopped after 400 queries") || len(cols) == 0 || len(cols) == 10 {
		t.Fatalf("%d queries, columns %v, note %q", res.Queries, cols, res.Note)
	}
	// Over the columns it completed, the rows are exact.
	if res.Recovered != reconRows || !*res.Exact {
		t.Errorf("over %v: recovered %d rows, %d matched", cols, res.Recovered, *res.CellsExact)
	}
}

// Through the real Engine, with truth: a suburb's people over sex and age,
// the sex domain given as M alone and the age domain as 30..60. The rows of
// women are folded into M (the low end of a one-value text domain) and the
// ages outside 30..60 into 30 and 60; the note says so with the counts,
// which are read here from the truth, and the score says how many rows
// still matched.
func TestIDPReconstructTooNarrowThroughTheEngine(t *testing.T) {
	ctx := context.Background()
	const suburb = "suburb = 'suburb_0003'"
	truthCount := func(where string) int64 {
		n, err := attacks.TrueCount(ctx, reconPeople(t), attacks.Target{Table: "people", Where: suburb + " AND " + where})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	women, young, old := truthCount("sex < 'M'"), truthCount("age < 30"), truthCount("age > 60")
	if women == 0 || young == 0 || old == 0 {
		t.Fatalf("the suburb has %d women, %d people under 30, %d over 60: the test needs some of each", women, young, old)
	}
	o := attacks.Options{
		Target:    attacks.Target{Table: "people", Where: suburb},
		Threshold: attacks.ThresholdSetup{GroupK: -1},
		Domains:   []attacks.Domain{{Column: "sex", Categories: []string{"M"}}, {Column: "age", Lo: 30, Hi: 60}},
	}
	res, err := attacks.Execute(ctx, attacks.IDPReconstruct, reconEngine(t, 1), o, reconPeople(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		fmt.Sprintf("the domain of sex looks too narrow at its low end: %d of the target's rows have sex sorting before 'M' and were counted as 'M'", women),
		fmt.Sprintf("the domain of age looks too narrow at its low end: %d of the target's rows have age below 30", young),
		fmt.Sprintf("the domain of age looks too narrow at its high end: %d of the target's rows have age above 60", old),
		fmt.Sprintf("Scored against the truth: %d of the %d rows recovered match its %d rows", *res.CellsExact, res.Recovered, *res.Truth),
	} {
		if !strings.Contains(res.Note, w) {
			t.Errorf("note %q lacks %q", res.Note, w)
		}
	}
	if *res.Exact || res.Recovered != *res.Truth {
		t.Errorf("exact %v, recovered %d of %d rows: want every row, folded", *res.Exact, res.Recovered, *res.Truth)
	}
}

// reconEngine fronts the small people table with idp (k = 1) in process,
// through the real planner, SQLite and ledger, with an epsilon cap.
func reconEngine(t *testing.T, epsilonCap float64) *attacks.Logged {
	t.Helper()
	return reconEngineWith(t, epsilonCap, "full", 100)
}

// reconEngineWith is reconEngine with the audit's sync and the ledger's
// reservation (queries' worth of budget reserved at a time).
func reconEngineWith(t testing.TB, epsilonCap float64, auditSync string, reserve int) *attacks.Logged {
	t.Helper()
	e := openReconEngine(t, epsilonCap, auditSync, reserve)
	return &attacks.Logged{Querier: attacks.InProcess{Session: e.NewSession("mallory")}}
}

// openReconEngine is the Engine behind reconEngineWith, for callers that
// open several sessions on it.
func openReconEngine(t testing.TB, epsilonCap float64, auditSync string, reserve int) *proxy.Engine {
	t.Helper()
	dir := t.TempDir()
	body := fmt.Sprintf(`database: %s
state: %s
audit: {sync: %s}
mechanism: {name: idp}
mechanisms:
  idp: {k: 1}
budget:
  epsilon: {default: 1.0e-10, min: 1.0e-12, max: 1}
  epsilon_cap: %g
  reserve: %d
tables:
  people:
    privacy_unit: id
`, reconPeople(t), filepath.Join(dir, "state.db"), auditSync, epsilonCap, reserve)
	e, _ := openEngine(t, body)
	return e
}

// Through the real Engine: one suburb's people rebuilt exactly, every
// attribute, at a claimed idp epsilon of queries x 1e-10 read back from the
// ledger; with a cap the ledger reaches first, the attack stops at the
// refusal (53400) and keeps the columns it completed.
func TestIDPReconstructThroughTheEngine(t *testing.T) {
	ctx := context.Background()
	o := allPeople()
	o.Target.Where = "suburb = 'suburb_0003'"
	q := reconEngine(t, 0.001)
	res, err := attacks.Execute(ctx, attacks.IDPReconstruct, q, o, reconPeople(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("engine: %d rows in %d queries (%.1f per person), %.2fs, spent %v, sample %v",
		res.Recovered, res.Queries, res.Details["queries_per_person"], res.Seconds, res.Spent, res.Details["sample"])
	if *res.Truth < 10 || res.Recovered != *res.Truth || !*res.Exact || res.Refused != 0 || res.Mechanism != "idp" {
		t.Fatalf("recovered %d of %d rows (exact %v), %d refused, mechanism %q, note %q", res.Recovered, *res.Truth, *res.Exact, res.Refused, res.Mechanism, res.Note)
	}
	if want := float64(res.Queries) * 1e-10; math.Abs(res.Spent["idp"]-want) > want*1e-9 {
		t.Errorf("idp claims %g for %d queries, want %g", res.Spent["idp"], res.Queries, want)
	}

	// A cap of 200 answers at 1e-10 each.
	q = reconEngine(t, 200e-10)
	res, err = attacks.Execute(ctx, attacks.IDPReconstruct, q, o, reconPeople(t))
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := attacks.ReconstructedRows(res)
	if res.Refused != 1 || !strings.Contains(res.Note, "stopped after") || len(cols) == 10 {
		t.Fatalf("refused %d, columns %v, note %q", res.Refused, cols, res.Note)
	}
	if res.Spent["idp"] > 200e-10*(1+1e-9) {
		t.Errorf("spent %g past the cap", res.Spent["idp"])
	}
	t.Logf("capped: %d queries, %d refused, columns %v, recovered %d, note %q", res.Queries, res.Refused, cols, res.Recovered, res.Note)
}
