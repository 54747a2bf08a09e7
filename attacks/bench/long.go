package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/google/differential-privacy/go/v3/dpagg"
	"github.com/google/differential-privacy/go/v3/noise"

	"countwall/attacks"
	"countwall/attacks/demo"
	"countwall/dataset"
	"countwall/proxy/state"
)

// The long table: people with 1 to longMaxRows rows each, as a table of
// visits or transactions has, served with the per-person bounds of the
// issue that measured it (C = 3 rows a cell, G = 8 cells a query).
const (
	longMaxRows   = 20
	longRowsBound = 3
	longCellBound = 8
)

// benchLongGroupQueries are GROUP BY statements on the long table without a
// declared domain for G to be lowered to, so each person keeps 8 cells.
var benchLongGroupQueries = []string{
	"SELECT hours, COUNT(*) FROM people GROUP BY hours",
	"SELECT zip, COUNT(*) FROM people WHERE sex = 'F' GROUP BY zip",
}

// benchLong measures bounded counts on a long table of people/10 people
// (about 10.5 rows each): laplace with C and G against exact on the same
// statements, and the bounded COUNT against the same count computed with
// Google's differential-privacy library over rows read once into memory
// (libraryCount), which countwall should beat.
func benchLong(ctx context.Context, tw io.Writer, dir string, people int, auditSync state.AuditSync, measure measurer) error {
	dbPath, people := longTablePath(dir, people)
	if _, err := os.Stat(dbPath); err != nil {
		o := dataset.PeopleOptions{Rows: int64(people), Seed: 1, MaxRowsPerPerson: longMaxRows}
		if err := dataset.GeneratePeople(ctx, dbPath, o, dataset.WriteOptions{}); err != nil {
			return fmt.Errorf("generating the long table: %w", err)
		}
	}
	times := map[string][2]time.Duration{}
	var startTook time.Duration
	for _, name := range []string{"exact", "laplace"} {
		start := time.Now()
		srv, err := startLong(ctx, dir, dbPath, name, auditSync, nil)
		if err != nil {
			return fmt.Errorf("long table, %s: %w", name, err)
		}
		if name == "exact" {
			startTook = time.Since(start)
		}
		q := attacks.InProcess{Session: srv.Engine.NewSession("bench")}
		// The start read the table; the first statement of a GROUP BY shape
		// computes the keyed choice of cells. The lines measure the answers
		// after them.
		for _, stmt := range append(benchQueries[:1:1], benchLongGroupQueries...) {
			if _, err := q.Query(ctx, stmt); err != nil {
				srv.Stop()
				return fmt.Errorf("long table, %s: %w", name, err)
			}
		}
		c, err := measure(q, benchQueries)
		if err == nil {
			var g time.Duration
			g, err = measure(q, benchLongGroupQueries)
			times[name] = [2]time.Duration{c, g}
		}
		srv.Stop()
		if err != nil {
			return fmt.Errorf("long table, %s: %w", name, err)
		}
	}
	library, err := libraryCount(ctx, dbPath, measure)
	if err != nil {
		return err
	}
	exact, bounded := times["exact"], times["laplace"]
	fmt.Fprintf(tw, "long table, start: table read into memory\t%s\t\n", startTook.Round(time.Millisecond))
	fmt.Fprintf(tw, "long table (%d people, 1-%d rows each), exact COUNT\t%s\t\n", people, longMaxRows, exact[0].Round(time.Microsecond))
	fmt.Fprintf(tw, "long table, laplace C=%d: COUNT / exact\t%s\t%.2f× exact\n", longRowsBound, bounded[0].Round(time.Microsecond), ratio(bounded[0], exact[0]))
	fmt.Fprintf(tw, "long table, exact GROUP BY\t%s\t\n", exact[1].Round(time.Microsecond))
	fmt.Fprintf(tw, "long table, laplace C=%d G=%d: GROUP BY / exact\t%s\t%.2f× exact\n", longRowsBound, longCellBound, bounded[1].Round(time.Microsecond), ratio(bounded[1], exact[1]))
	fmt.Fprintf(tw, "long table, Google's dpagg, C=%d (no firewall): COUNT\t%s\t%.2f× laplace\n", longRowsBound, library.Round(time.Microsecond), ratio(library, bounded[0]))
	return nil
}

// longTablePath is where the long table of a bench of rows rows is
// written, and its people: rows/10.
func longTablePath(dir string, rows int) (string, int) {
	people := max(rows/10, 1)
	return filepath.Join(dir, fmt.Sprintf("bench-long-%d.db", people)), people
}

// startLong starts a firewall on the long table at dbPath under the
// mechanism name, with the long table's bounds and the value bounds given.
func startLong(ctx context.Context, dir, dbPath, name string, auditSync state.AuditSync, values map[string]any) (*demo.Firewall, error) {
	tables, err := demo.PeopleTables()
	if err != nil {
		return nil, err
	}
	section, ok := tables[dataset.PeopleTableName].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the people table's config has no section of its own")
	}
	delete(section, "unit_keyed")
	section["max_rows_per_unit"] = longRowsBound
	section["max_groups_per_unit"] = longCellBound
	if values != nil {
		section["bounds"] = values
	}
	s := demo.Settings[name]
	s.Budget, s.AuditSync = benchBudget, string(auditSync)
	return demo.StartFirewall(ctx, dir, dbPath, tables, s, []string{"bench"})
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(max(b, 1)) }

// libraryCount times the same bounded count computed with Google's
// differential-privacy library without the firewall: the table read once
// into memory, then per statement a filter over every row and the matching
// rows counted per person, each person's count added to a
// dpagg.BoundedSumInt64 that clamps it to [0, C] (each person in one
// partition, MaxPartitionsContributed 1) and draws Laplace noise at the
// laplace line's epsilon. dpagg.Count takes one contribution per person and
// partition (its MaxContributionsPerPartition is not exported, and its
// documentation sends several rows a person to BoundedSumInt64), so the
// clamp to C is the library's own bounding.
func libraryCount(ctx context.Context, dbPath string, measure measurer) (time.Duration, error) {
	frame, err := openFrame(ctx, dbPath, benchEpsilon)
	if err != nil {
		return 0, err
	}
	return measure(frame, benchQueries)
}

// openFrame reads the long table at dbPath whole, for counts at epsilon.
func openFrame(ctx context.Context, dbPath string, epsilon float64) (*frame, error) {
	db, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	f, err := readFrame(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("reading the long table for the library's line: %w", err)
	}
	f.epsilon = epsilon
	return f, nil
}

// frame is the long table as a dataframe holds it: one slice per column.
type frame struct {
	id, age, zip, income, hours, secret         []int64
	sex, suburb, education, marital, occupation []string
	perID                                       []int64 // scratch, one per id
	epsilon                                     float64 // of each count's noise
}

// readFrame reads the people table whole.
func readFrame(ctx context.Context, db *sql.DB) (*frame, error) {
	rows, err := db.QueryContext(ctx, "SELECT id, age, sex, suburb, zip, income, education, marital, occupation, hours, secret FROM people")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	f := &frame{}
	var maxID int64
	for rows.Next() {
		var id, age, zip, income, hours, secret int64
		var sex, suburb, education, marital, occupation string
		if err := rows.Scan(&id, &age, &sex, &suburb, &zip, &income, &education, &marital, &occupation, &hours, &secret); err != nil {
			return nil, err
		}
		f.id, f.age, f.zip, f.income = append(f.id, id), append(f.age, age), append(f.zip, zip), append(f.income, income)
		f.hours, f.secret = append(f.hours, hours), append(f.secret, secret)
		f.sex, f.suburb, f.education = append(f.sex, sex), append(f.suburb, suburb), append(f.education, education)
		f.marital, f.occupation = append(f.marital, marital), append(f.occupation, occupation)
		maxID = max(maxID, id)
	}
	f.perID = make([]int64, maxID+1)
	return f, rows.Err()
}

// frameFilters are benchQueries' WHERE clauses as a dataframe's masks, in
// the same order.
var frameFilters = []func(f *frame, i int) bool{
	func(f *frame, i int) bool { return f.age[i] >= 30 && f.age[i] <= 39 && f.sex[i] == "F" },
	func(f *frame, i int) bool { return f.suburb[i] == "suburb_0007" && f.age[i] > 60 },
	func(f *frame, i int) bool {
		return (f.education[i] == "master" || f.education[i] == "doctorate") && f.income[i] > 100000
	},
	func(f *frame, i int) bool { return f.occupation[i] == "retired" || f.hours[i] < 10 },
	func(f *frame, i int) bool { return f.zip[i] >= 2010 && f.zip[i] < 2020 && f.marital[i] == "married" },
	func(f *frame, i int) bool { return !(f.sex[i] == "M" && f.age[i] < 40) },
	func(f *frame, i int) bool { return f.secret[i] == 1 && f.age[i] >= 50 },
	func(f *frame, i int) bool { return true },
}

// Query answers one of benchQueries: the mask, the rows per id, each id's
// rows added to the library's bounded sum (clamped to [0, C]), the noisy
// result.
func (f *frame) Query(_ context.Context, stmt string) (*attacks.Rows, error) {
	filter := -1
	for i, q := range benchQueries {
		if q == stmt {
			filter = i
		}
	}
	if filter < 0 || filter >= len(frameFilters) {
		return nil, fmt.Errorf("the library's line answers the bench's COUNT statements only, not %q", stmt)
	}
	sum, err := dpagg.NewBoundedSumInt64(&dpagg.BoundedSumInt64Options{
		Epsilon: f.epsilon, MaxPartitionsContributed: 1, Lower: 0, Upper: longRowsBound, Noise: noise.Laplace(),
	})
	if err != nil {
		return nil, err
	}
	keep := frameFilters[filter]
	var touched []int64
	for i := range f.id {
		if !keep(f, i) {
			continue
		}
		if f.perID[f.id[i]] == 0 {
			touched = append(touched, f.id[i])
		}
		f.perID[f.id[i]]++
	}
	for _, id := range touched {
		err = errors.Join(err, sum.Add(f.perID[id]))
		f.perID[id] = 0
	}
	if err != nil {
		return nil, err
	}
	n, err := sum.Result()
	if err != nil {
		return nil, err
	}
	return &attacks.Rows{Columns: []string{"count"}, Values: [][]string{{fmt.Sprint(n)}}}, nil
}
