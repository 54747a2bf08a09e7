package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"countwall/attacks"
	"countwall/dataset/pgcopy"
	"countwall/planner"
)

// benchPostgresCommand is `countwall bench postgres`: the PostgreSQL store
// against the same COUNT straight to PostgreSQL, and throughput with 1, 2 and
// 4 firewall instances sharing one PostgreSQL state.
func benchPostgresCommand() *cobra.Command {
	var store, state, keep string
	var rows, perRound, rounds int
	cmd := &cobra.Command{
		Use:   "postgres --store URL --state URL",
		Short: "Measure the PostgreSQL store against raw PostgreSQL, and 1, 2, 4 instances on one PostgreSQL state",
		Long: `postgres fronts the people table of the --store database (copied there from a generated
SQLite table when it has none, so the role needs CREATE the first time) and answers the bench
statements straight from PostgreSQL and through the Engine in process under exact, cellkey and
laplace. Then it starts 1, 2 and 4 firewall instances in this process (each its own Engine, store
pool and ledger, as separate processes would have) sharing the --state database, and runs 8 wire
clients spread over them under laplace, every answer charged to one analyst's shared budget.`,
		Example: "  countwall bench postgres --store postgres://bench@localhost/census --state postgres://bench@localhost/countwall_state",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			if !planner.IsPostgresURL(store) || !planner.IsPostgresURL(state) {
				return errors.New("--store and --state must both be postgres:// URLs")
			}
			if rows < 1 || perRound < 1 || rounds < 1 {
				return errors.New("--rows, --queries and --rounds must be at least 1")
			}
			dir, cleanup, err := workDir(keep, "countwall-bench-postgres-")
			if err != nil {
				return err
			}
			defer cleanup()
			return runBenchPostgres(ctx, cmd.OutOrStdout(), dir, store, state, rows, perRound, rounds)
		},
	}
	f := cmd.Flags()
	f.StringVar(&store, "store", "", "the protected PostgreSQL database (postgres:// URL)")
	f.StringVar(&state, "state", "", "the shared PostgreSQL state database (postgres:// URL)")
	f.IntVar(&rows, "rows", 100_000, "rows of the people table when it must be created")
	f.IntVar(&perRound, "queries", 200, "queries per round")
	f.IntVar(&rounds, "rounds", 3, "rounds per line; the median is reported")
	f.StringVar(&keep, "dir", "", "keep the generated files here")
	return cmd
}

func runBenchPostgres(ctx context.Context, w io.Writer, dir, store, state string, rows, perRound, rounds int) error {
	raw, err := sql.Open("pgx", store)
	if err != nil {
		return err
	}
	defer raw.Close()
	var have int
	if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'people'`).Scan(&have); err != nil {
		return fmt.Errorf("reading the store's tables: %w", err)
	}
	if have == 0 {
		path := filepath.Join(dir, fmt.Sprintf("bench-%d.db", rows))
		if err := generateDemoDB(ctx, path, rows); err != nil {
			return fmt.Errorf("generating the bench table: %w", err)
		}
		if _, err := pgcopy.Table(ctx, path, "people", store); err != nil {
			return err
		}
	}
	if err := raw.QueryRowContext(ctx, "SELECT COUNT(*) FROM people").Scan(&have); err != nil {
		return fmt.Errorf("counting the store's people: %w", err)
	}

	measure := func(q attacks.Querier, stmts []string) (time.Duration, error) {
		var times []time.Duration
		for range rounds {
			start := time.Now()
			for i := range perRound {
				if _, err := q.Query(ctx, stmts[i%len(stmts)]); err != nil {
					return 0, err
				}
			}
			times = append(times, time.Since(start)/time.Duration(perRound))
		}
		slices.Sort(times)
		return times[len(times)/2], nil
	}

	fmt.Fprintf(w, "countwall bench postgres: %d-row people table in %s, %d queries a round, median of %d rounds\n\n",
		have, planner.StoreName(store), perRound, rounds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "what\tper query\tratio")
	rawTime, err := measure(rawSQLite{raw}, benchQueries)
	if err != nil {
		return fmt.Errorf("raw PostgreSQL: %w", err)
	}
	fmt.Fprintf(tw, "COUNT straight to PostgreSQL\t%s\t1.00× raw\n", rawTime.Round(time.Microsecond))
	for _, name := range []string{"exact", "cellkey", "laplace"} {
		s := demoSettings[name]
		s.budget, s.state = benchBudget, state
		srv, err := startDemoServer(ctx, dir, store, demoTableYAML(), s, []string{"bench"})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		d, err := measure(attacks.InProcess{Session: srv.engine.NewSession("bench")}, benchQueries)
		srv.stop()
		if err != nil {
			return fmt.Errorf("%s in process: %w", name, err)
		}
		fmt.Fprintf(tw, "%s, in process\t%s\t%.2f× raw\n", name, d.Round(time.Microsecond), float64(d)/float64(rawTime))
	}

	const clients = 8
	var single float64
	for _, n := range []int{1, 2, 4} {
		qps, err := benchInstances(ctx, dir, store, state, n, clients, len(benchQueries)*8)
		if err != nil {
			return err
		}
		if n == 1 {
			single = qps
		}
		fmt.Fprintf(tw, "laplace, %d instance(s) on one state, %d wire clients\t%.0f queries/s\t%.2f× one instance\n", n, clients, qps, qps/single)
	}
	return tw.Flush()
}

// benchInstances starts n firewall instances sharing the state, spreads
// clients over them, and returns the queries answered per second.
func benchInstances(ctx context.Context, dir, store, state string, n, clients, perClient int) (float64, error) {
	s := demoSettings["laplace"]
	s.budget, s.state = benchBudget, state
	var srvs []*demoServer
	defer func() {
		for _, srv := range srvs {
			srv.stop()
		}
	}()
	for range n {
		srv, err := startDemoServer(ctx, dir, store, demoTableYAML(), s, []string{"bench"})
		if err != nil {
			return 0, err
		}
		srvs = append(srvs, srv)
	}
	conns := make([]*attacks.Wire, clients)
	for i := range conns {
		c, err := srvs[i%n].dial(ctx, "bench")
		if err != nil {
			return 0, err
		}
		defer c.Close()
		conns[i] = c
	}
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	start := time.Now()
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range perClient {
				if _, err := c.Query(ctx, benchQueries[(i+j)%len(benchQueries)]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, fmt.Errorf("%d instances: %w", n, err)
	}
	return float64(clients*perClient) / time.Since(start).Seconds(), nil
}
