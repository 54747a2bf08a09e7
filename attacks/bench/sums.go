package bench

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/google/differential-privacy/go/v3/dpagg"
	"github.com/google/differential-privacy/go/v3/noise"

	"countwall/attacks"
	"countwall/dataset"
	"countwall/proxy/state"
)

// A bounded SUM on the long table (people with 1 to 20 rows each, not
// keyed by person) under laplace, beside Google's dpagg.BoundedSumFloat64
// on the same rows at the same epsilon and sensitivity: time per answer
// and the error of each against its own noiseless bounded sum.
const (
	sumEpsilon = 1.0
	sumMax     = 200_000 // income's public bounds are [0, sumMax]
	sumRuns    = 200     // answers each side; the RMSE ratio's sd is about 0.1
	sumQuery   = "SELECT SUM(income) FROM people"
)

// benchSums prints the bounded SUM lines. The long table at dbPath is
// benchLong's, already written.
func benchSums(ctx context.Context, tw io.Writer, dir, dbPath string, auditSync state.AuditSync) error {
	rows, err := readIncomes(ctx, dbPath)
	if err != nil {
		return fmt.Errorf("bounded SUM: reading the long table: %w", err)
	}
	srv, err := startLong(ctx, dir, dbPath, "laplace", auditSync, map[string]any{"income": map[string]any{"min": 0, "max": sumMax}})
	if err != nil {
		return fmt.Errorf("bounded SUM: %w", err)
	}
	defer srv.Stop()
	q := attacks.InProcess{Session: srv.Engine.NewSession("bench")}
	if _, err := q.Query(ctx, fmt.Sprintf("SET epsilon = %g", sumEpsilon)); err != nil {
		return fmt.Errorf("bounded SUM: %w", err)
	}
	if _, err := q.Query(ctx, sumQuery); err != nil { // the first answer, as the other lines have
		return fmt.Errorf("bounded SUM: %w", err)
	}
	cwTruth, libTruth := rows.boundedTruths()
	var cwSq, libSq float64
	start := time.Now()
	for range sumRuns {
		res, err := q.Query(ctx, sumQuery)
		if err != nil {
			return fmt.Errorf("bounded SUM: %w", err)
		}
		v, err := strconv.ParseFloat(res.Values[0][0], 64)
		if err != nil {
			return fmt.Errorf("bounded SUM: the answer does not read as a number: %w", err)
		}
		cwSq += (v - cwTruth) * (v - cwTruth)
	}
	cwTime := time.Since(start) / sumRuns
	start = time.Now()
	for range sumRuns {
		v, err := librarySum(ctx, dbPath)
		if err != nil {
			return fmt.Errorf("bounded SUM, dpagg: %w", err)
		}
		libSq += (v - libTruth) * (v - libTruth)
	}
	libTime := time.Since(start) / sumRuns
	rmse := math.Sqrt(cwSq/sumRuns) / math.Sqrt(libSq/sumRuns)
	fmt.Fprintf(tw, "long table, laplace C=%d: SUM(income), epsilon %g\t%s\t%.2f× faster than dpagg\n", longRowsBound, sumEpsilon, cwTime.Round(time.Microsecond), ratio(libTime, cwTime))
	fmt.Fprintf(tw, "dpagg.BoundedSumFloat64, same rows (each person's first %d)\t%s\tRMSE %.2f× dpagg's\n", longRowsBound, libTime.Round(time.Microsecond), rmse)
	return nil
}

// incomes are the long table's (person, income) rows, in the file's order.
type incomes struct {
	id     []int64
	income []float64
}

func readIncomes(ctx context.Context, dbPath string) (*incomes, error) {
	db, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rs, err := db.QueryContext(ctx, "SELECT id, income FROM "+dataset.PeopleTableName)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	r := &incomes{}
	for rs.Next() {
		var id int64
		var v float64
		if err := rs.Scan(&id, &v); err != nil {
			return nil, err
		}
		r.id, r.income = append(r.id, id), append(r.income, v)
	}
	return r, rs.Err()
}

// boundedTruths are the noiseless sums each side bounds the rows to:
// countwall's (a person's clamped values, C times their mean past C) and
// the library's as fed (each person's first C values, clamped).
func (r *incomes) boundedTruths() (countwall, library float64) {
	total, n := map[int64]float64{}, map[int64]int64{}
	for i, id := range r.id {
		v := min(max(r.income[i], 0), sumMax)
		if n[id] < longRowsBound {
			library += v
		}
		total[id] += v
		n[id]++
	}
	for id, t := range total {
		if n[id] > longRowsBound {
			t *= float64(longRowsBound) / float64(n[id])
		}
		countwall += t
	}
	return countwall, library
}

// librarySum is one answer as a user of the library computes it: every
// row read from the file, each person's first C values clamped to the
// bounds and summed, and each person's sum added once to a
// dpagg.BoundedSumFloat64 bounded by [0, C*max]: the library takes one
// contribution a person, so that its sensitivity is countwall's, C*max.
func librarySum(ctx context.Context, dbPath string) (float64, error) {
	bs, err := dpagg.NewBoundedSumFloat64(&dpagg.BoundedSumFloat64Options{Epsilon: sumEpsilon,
		MaxPartitionsContributed: 1, Lower: 0, Upper: longRowsBound * sumMax, Noise: noise.Laplace()})
	if err != nil {
		return 0, err
	}
	r, err := readIncomes(ctx, dbPath)
	if err != nil {
		return 0, err
	}
	sum, n := map[int64]float64{}, map[int64]int64{}
	for i, id := range r.id {
		if n[id] < longRowsBound {
			n[id]++
			sum[id] += min(max(r.income[i], 0), sumMax)
		}
	}
	for _, v := range sum {
		if err := bs.Add(v); err != nil {
			return 0, err
		}
	}
	return bs.Result()
}
