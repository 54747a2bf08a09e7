package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"countwall/attacks"
	"countwall/attacks/demo"
	"countwall/dataset/pgcopy"
)

// PostgresOptions size `countwall bench postgres`.
type PostgresOptions struct {
	Options
	Store string // the protected PostgreSQL database (postgres:// URL)
	State string // the shared PostgreSQL state database (postgres:// URL)
}

// RunPostgres fronts the people table of the Store database (copied there
// from a generated SQLite table when it has none, so the role needs CREATE
// the first time), answers the bench statements straight from PostgreSQL and
// through the Engine in process under exact, cellkey and laplace, then
// starts 1, 2 and 4 firewall instances sharing the State database and runs
// 8 wire clients spread over them under laplace, every answer charged to
// one analyst's shared budget.
func RunPostgres(ctx context.Context, w io.Writer, o PostgresOptions) error {
	if !isPostgresURL(o.Store) || !isPostgresURL(o.State) {
		return errors.New("--store and --state must both be postgres:// URLs")
	}
	if err := o.Check(); err != nil {
		return err
	}
	raw, err := sql.Open("pgx", o.Store)
	if err != nil {
		return err
	}
	defer raw.Close()
	have, err := ensurePeopleTable(ctx, raw, o)
	if err != nil {
		return err
	}
	people, err := demo.PeopleTables()
	if err != nil {
		return err
	}
	measure := medianPerQuery(ctx, o.Rounds, o.PerRound)

	fmt.Fprintf(w, "countwall bench postgres: %d-row people table in %s, %d queries a round, median of %d rounds\n\n",
		have, redactURL(o.Store), o.PerRound, o.Rounds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "what\tper query\tratio")
	rawTime, err := measure(rawSQLite{raw}, benchQueries)
	if err != nil {
		return fmt.Errorf("raw PostgreSQL: %w", err)
	}
	fmt.Fprintf(tw, "COUNT straight to PostgreSQL\t%s\t1.00× raw\n", rawTime.Round(time.Microsecond))
	for _, name := range []string{"exact", "cellkey", "laplace"} {
		s := demo.Settings[name]
		s.Budget, s.State = benchBudget, o.State
		srv, err := demo.StartFirewall(ctx, o.Dir, o.Store, people, s, []string{"bench"})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		d, err := measure(attacks.InProcess{Session: srv.Engine.NewSession("bench")}, benchQueries)
		srv.Stop()
		if err != nil {
			return fmt.Errorf("%s in process: %w", name, err)
		}
		fmt.Fprintf(tw, "%s, in process\t%s\t%.2f× raw\n", name, d.Round(time.Microsecond), float64(d)/float64(rawTime))
	}

	const clients = 8
	var single float64
	for _, n := range []int{1, 2, 4} {
		qps, err := instancesThroughput(ctx, o, people, n, clients, len(benchQueries)*8)
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

// ensurePeopleTable copies a generated people table into the store when it
// has none, and returns how many rows the store's table holds.
func ensurePeopleTable(ctx context.Context, raw *sql.DB, o PostgresOptions) (int, error) {
	var have int
	if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'people'`).Scan(&have); err != nil {
		return 0, fmt.Errorf("reading the store's tables: %w", err)
	}
	if have == 0 {
		path := filepath.Join(o.Dir, fmt.Sprintf("bench-%d.db", o.Rows))
		if err := demo.GeneratePeople(ctx, path, o.Rows, o.Progress); err != nil {
			return 0, fmt.Errorf("generating the bench table: %w", err)
		}
		if _, err := pgcopy.Table(ctx, path, "people", o.Store); err != nil {
			return 0, err
		}
	}
	if err := raw.QueryRowContext(ctx, "SELECT COUNT(*) FROM people").Scan(&have); err != nil {
		return 0, fmt.Errorf("counting the store's people: %w", err)
	}
	return have, nil
}

// instancesThroughput starts n firewall instances sharing the state, spreads
// clients over them, and returns the queries answered per second.
func instancesThroughput(ctx context.Context, o PostgresOptions, people map[string]any, n, clients, perClient int) (float64, error) {
	s := demo.Settings["laplace"]
	s.Budget, s.State = benchBudget, o.State
	var srvs []*demo.Firewall
	defer func() {
		for _, srv := range srvs {
			srv.Stop()
		}
	}()
	for range n {
		srv, err := demo.StartFirewall(ctx, o.Dir, o.Store, people, s, []string{"bench"})
		if err != nil {
			return 0, err
		}
		srvs = append(srvs, srv)
	}
	return benchThroughput(ctx, srvs, clients, perClient)
}

func isPostgresURL(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// redactURL is a URL as the bench prints it: no password, no parameters.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "the --store database"
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	u.RawQuery = ""
	return u.String()
}
