// Package bench is `countwall bench`: protected answers against the same
// COUNT sent straight to SQLite, the wire against in process, and throughput
// with concurrent clients, as ratios of one run. It drives the demo's
// loopback firewalls through the attack programs' queriers, so it measures
// what an attack pays per query.
package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	"countwall/attacks"
	"countwall/attacks/demo"
	"countwall/proxy/state"
)

// benchQueries are the statements every bench line answers: equalities,
// ranges, IN lists and a negation over the people table, as analysts ask.
var benchQueries = []string{
	"SELECT COUNT(*) FROM people WHERE age BETWEEN 30 AND 39 AND sex = 'F'",
	"SELECT COUNT(*) FROM people WHERE suburb = 'suburb_0007' AND age > 60",
	"SELECT COUNT(*) FROM people WHERE education IN ('master', 'doctorate') AND income > 100000",
	"SELECT COUNT(*) FROM people WHERE occupation = 'retired' OR hours < 10",
	"SELECT COUNT(*) FROM people WHERE zip >= 2010 AND zip < 2020 AND marital = 'married'",
	"SELECT COUNT(*) FROM people WHERE NOT (sex = 'M' AND age < 40)",
	"SELECT COUNT(*) FROM people WHERE secret = 1 AND age >= 50",
	"SELECT COUNT(*) FROM people",
}

// benchGroupQueries are GROUP BY statements over declared domains: under
// laplace each person may count in one cell of each (max_groups_per_unit 1),
// chosen by a keyed hash, which is what bounding costs most for.
var benchGroupQueries = []string{
	"SELECT age, COUNT(*) FROM people GROUP BY age",
	"SELECT education, COUNT(*) FROM people WHERE sex = 'F' GROUP BY education",
}

// benchAttackQueries are noise-remover statements: two-partition sides over
// the age column, the shape the histogram attacks send by the ten thousand.
func benchAttackQueries() []string {
	o := attacks.Options{Target: attacks.Target{Table: "people"}, Column: "age"}
	base := []string{"20", "21", "22", "23", "24", "25", "26", "27", "28", "29"}
	var out []string
	for mask := uint64(1); mask < 1<<9; mask += 7 {
		a1, a2 := attacks.TwoPartitionSQL(o, base, mask)
		out = append(out, a1, a2)
	}
	return out
}

// benchEpsilon is each bench answer's share of the budget, and the
// library line's epsilon.
const benchEpsilon = 0.001

// benchBudget lets the accounting mechanisms answer every bench query: a
// share of benchEpsilon, a cap no run reaches, budget reserved 100 queries
// at a time.
var benchBudget = map[string]any{
	"epsilon":     map[string]any{"default": benchEpsilon, "min": 1e-12, "max": 1},
	"epsilon_cap": 1e9,
	"reserve":     100,
}

// Options size a bench run.
type Options struct {
	Dir      string // work directory; a database of the same size there is reused
	Rows     int    // rows in the generated people table
	PerRound int    // queries per round
	Rounds   int    // rounds per line; the median is reported
	// AuditSync is the firewalls' audit.sync: full (the default) or normal.
	AuditSync string
	Progress  func(done, total int) // generating the table; nil shows none
}

// Check refuses sizes that measure nothing.
func (o Options) Check() error {
	if o.Rows < 1 || o.PerRound < 1 || o.Rounds < 1 {
		return fmt.Errorf("--rows, --queries and --rounds must be at least 1")
	}
	if _, err := state.ParseAuditSync(o.AuditSync); err != nil {
		return fmt.Errorf("--audit-sync: %w", err)
	}
	return nil
}

// Run measures protected answers against raw SQLite, the wire against in
// process, and throughput with 1, 2, 4 and 8 clients, and prints one line
// each with its ratio to w.
func Run(ctx context.Context, w io.Writer, o Options) error {
	if err := o.Check(); err != nil {
		return err
	}
	return run(ctx, w, o)
}

func run(ctx context.Context, w io.Writer, o Options) (err error) {
	dbPath := filepath.Join(o.Dir, fmt.Sprintf("bench-%d.db", o.Rows))
	if _, err := os.Stat(dbPath); err != nil {
		if err := demo.GeneratePeople(ctx, dbPath, o.Rows, o.Progress); err != nil {
			return fmt.Errorf("generating the bench database: %w", err)
		}
	}
	raw, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro")
	if err != nil {
		return err
	}
	defer raw.Close()
	measure := medianPerQuery(ctx, o.Rounds, o.PerRound)

	auditSync, _ := state.ParseAuditSync(o.AuditSync)
	fmt.Fprintf(w, "countwall bench: %d-row people table, %d queries a round, median of %d rounds, audit.sync %s\n\n", o.Rows, o.PerRound, o.Rounds, auditSync)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	// The lines measured before a failure are printed with it.
	defer func() { err = errors.Join(err, tw.Flush()) }()
	fmt.Fprintln(tw, "what\tper query\tratio")
	rawTime, err := measure(rawSQLite{raw}, benchQueries)
	if err != nil {
		return fmt.Errorf("raw SQLite: %w", err)
	}
	fmt.Fprintf(tw, "COUNT straight to SQLite\t%s\t1.00× raw\n", rawTime.Round(time.Microsecond))

	people, err := demo.PeopleTables()
	if err != nil {
		return err
	}
	b := &mechanismBench{tw: tw, dir: o.Dir, dbPath: dbPath, people: people, auditSync: auditSync, measure: measure, raw: rawTime}
	for _, name := range []string{"exact", "cellkey", "laplace", "layered"} {
		if err := b.run(ctx, name); err != nil {
			return err
		}
	}
	if err := b.benchZCDP(ctx, o.Rounds, o.PerRound); err != nil {
		return err
	}
	if err := benchLong(ctx, tw, o.Dir, o.Rows, auditSync, measure); err != nil {
		return err
	}
	longPath, _ := longTablePath(o.Dir, o.Rows)
	return benchSums(ctx, tw, o.Dir, longPath, auditSync)
}

// measurer times statements on a querier: the median over rounds of the
// mean time per query.
type measurer func(q attacks.Querier, stmts []string) (time.Duration, error)

// medianPerQuery measures rounds rounds of perRound queries each, taking the
// statements in turn.
func medianPerQuery(ctx context.Context, rounds, perRound int) measurer {
	return func(q attacks.Querier, stmts []string) (time.Duration, error) {
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
}

// mechanismBench prints the lines of one mechanism at a time, in process,
// against raw SQLite and against exact (measured first).
type mechanismBench struct {
	tw          io.Writer
	dir, dbPath string
	people      map[string]any
	auditSync   state.AuditSync
	measure     measurer
	raw         time.Duration // COUNT straight to SQLite
	exact       time.Duration // exact's COUNT, in process
	exactGroups time.Duration // exact's GROUP BY, in process
}

// run starts a firewall under the mechanism name and prints its lines: for
// exact the wire and throughput too, for cellkey the attack programs' rate.
func (b *mechanismBench) run(ctx context.Context, name string) error {
	s := demo.Settings[name]
	s.Budget = benchBudget
	s.AuditSync = string(b.auditSync)
	start := time.Now()
	srv, err := demo.StartFirewall(ctx, b.dir, b.dbPath, b.people, s, []string{"bench"})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer srv.Stop()
	if name == "exact" {
		// The start checks the unit_keyed declaration (a pass in SQLite) and
		// reads the table into memory, as serve does before it accepts
		// analysts; every firewall here pays it once.
		fmt.Fprintf(b.tw, "start: table read into memory\t%s\t\n", time.Since(start).Round(time.Millisecond))
	}
	inProcess := attacks.InProcess{Session: srv.Engine.NewSession("bench")}
	// One statement before the lines, so that they measure answers from a
	// session already under way.
	if _, err := inProcess.Query(ctx, benchQueries[0]); err != nil {
		return fmt.Errorf("%s in process: %w", name, err)
	}
	d, err := b.measure(inProcess, benchQueries)
	if err != nil {
		return fmt.Errorf("%s in process: %w", name, err)
	}
	fmt.Fprintf(b.tw, "%s, in process\t%s\t%.2f× raw\n", name, d.Round(time.Microsecond), float64(d)/float64(b.raw))
	switch name {
	case "exact":
		if err := b.groups(name, inProcess, d); err != nil {
			return err
		}
		b.exact = d
		return benchWire(ctx, b.tw, srv, b.measure, b.exact)
	case "cellkey":
		// What contributor keys cost: cellkey needs each cell's key sum.
		fmt.Fprintf(b.tw, "cellkey / exact, in process\t\t%.2f× exact\n", float64(d)/float64(b.exact))
		return benchAttackRate(ctx, b.tw, srv, b.measure, inProcess)
	case "laplace":
		return b.groups(name, inProcess, d)
	}
	return nil
}

// groups measures GROUP BY over declared domains: the cost of bounding each
// person's contribution is laplace against exact on the same statements.
// count is the mechanism's COUNT time in process.
func (b *mechanismBench) groups(name string, q attacks.Querier, count time.Duration) error {
	g, err := b.measure(q, benchGroupQueries)
	if err != nil {
		return fmt.Errorf("%s GROUP BY in process: %w", name, err)
	}
	if name == "exact" {
		b.exactGroups = g
		fmt.Fprintf(b.tw, "exact, GROUP BY over a domain, in process\t%s\t\n", g.Round(time.Microsecond))
		return nil
	}
	fmt.Fprintf(b.tw, "laplace, bounded per person: COUNT / exact\t\t%.2f× exact\n", float64(count)/float64(b.exact))
	fmt.Fprintf(b.tw, "laplace, bounded per person: GROUP BY / exact\t%s\t%.2f× exact\n", g.Round(time.Microsecond), float64(g)/float64(b.exactGroups))
	return nil
}

// benchWire measures the wire against in process, and throughput with 1,
// 2, 4 and 8 concurrent clients.
func benchWire(ctx context.Context, tw io.Writer, srv *demo.Firewall, measure measurer, inProcess time.Duration) error {
	wire, err := srv.Dial(ctx, "bench")
	if err != nil {
		return err
	}
	d, err := measure(wire, benchQueries)
	wire.Close()
	if err != nil {
		return fmt.Errorf("exact over the wire: %w", err)
	}
	fmt.Fprintf(tw, "exact, over the wire (simple protocol)\t%s\t%.2f× in process\n", d.Round(time.Microsecond), float64(d)/float64(inProcess))
	var single float64
	for _, clients := range []int{1, 2, 4, 8} {
		qps, err := benchThroughput(ctx, []*demo.Firewall{srv}, clients, len(benchQueries)*8)
		if err != nil {
			return err
		}
		if clients == 1 {
			single = qps
		}
		fmt.Fprintf(tw, "exact, %d wire client(s) at once\t%.0f queries/s\t%.2f× one client\n", clients, qps, qps/single)
	}
	return nil
}

// benchThroughput runs perClient queries on each of clients connections at
// once, spread over the firewalls, and returns the queries answered per
// second.
func benchThroughput(ctx context.Context, srvs []*demo.Firewall, clients, perClient int) (float64, error) {
	conns := make([]*attacks.Wire, clients)
	for i := range conns {
		c, err := srvs[i%len(srvs)].Dial(ctx, "bench")
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
		go func(c *attacks.Wire, offset int) {
			defer wg.Done()
			for j := 0; j < perClient; j++ {
				if _, err := c.Query(ctx, benchQueries[(offset+j)%len(benchQueries)]); err != nil {
					errs <- err
					return
				}
			}
		}(c, i)
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, fmt.Errorf("%d clients: %w", clients, err)
	}
	return float64(clients*perClient) / time.Since(start).Seconds(), nil
}

// benchAttackRate is the attack programs' query rate, in process and over
// the wire, on the noise remover's statements under cellkey.
func benchAttackRate(ctx context.Context, tw io.Writer, srv *demo.Firewall, measure measurer, inProcess attacks.Querier) error {
	stmts := benchAttackQueries()
	in, err := measure(inProcess, stmts)
	if err != nil {
		return fmt.Errorf("attack statements in process: %w", err)
	}
	wire, err := srv.Dial(ctx, "bench")
	if err != nil {
		return err
	}
	defer wire.Close()
	over, err := measure(wire, stmts)
	if err != nil {
		return fmt.Errorf("attack statements over the wire: %w", err)
	}
	fmt.Fprintf(tw, "noise-remover statements, cellkey, in process\t%.0f queries/s\t\n", float64(time.Second)/float64(in))
	fmt.Fprintf(tw, "noise-remover statements, cellkey, over the wire\t%.0f queries/s\t%.2f× in process (time)\n", float64(time.Second)/float64(over), float64(over)/float64(in))
	return nil
}

// rawSQLite answers a COUNT straight from the database file, the baseline.
type rawSQLite struct{ db *sql.DB }

func (r rawSQLite) Query(ctx context.Context, stmt string) (*attacks.Rows, error) {
	var n int64
	if err := r.db.QueryRowContext(ctx, stmt).Scan(&n); err != nil {
		return nil, err
	}
	return &attacks.Rows{Columns: []string{"count"}, Values: [][]string{{fmt.Sprint(n)}}}, nil
}
