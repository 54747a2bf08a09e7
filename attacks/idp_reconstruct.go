package attacks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"countwall/dataset"
	"countwall/pgerror"
	"countwall/pglex"
)

// IDPReconstruct rebuilds a table, as a multiset of rows, from threshold
// range-count queries (Protivash et al. sections 3.3 and 3.4).
//
// Algorithm 1 finds the count of a predicate from where the sensitivity of
// `COUNT(*) > b` switches (ThresholdOracle.Count, a ternary search). Algorithm
// 2 recovers the multiset of a column's values among the rows of a group
// whose count s is known, with the paper's binary-search optimisation: the
// count of the left half of the domain, u <= col < v, is found in [0, s], the
// right half has the rest, and each half with rows is split again until it
// holds one value. The whole table (section 3.4) starts from one group, the
// target's rows, and splits every group by each column in turn; the groups
// left after the last column are the rows, with their multiplicities.
// Columns are taken in the order given; the demo takes small domains first,
// as the paper does, so that one search settles a value shared by many
// people.
//
// Under idp every answer is charged the tiny epsilon share the attack asks
// for, so the claimed total is queries x 1e-10. Under exact the same search
// runs with k = 0 (the paper's Table 4 comparison). Under laplace a threshold
// answer is a thresholded noisy count: the searches end on wrong counts, the
// oracle counts the contradictions it sees, and the attack reports what it
// recovered.
var IDPReconstruct = &Attack{
	Name:    "idp-reconstruct",
	Against: "idp",
	Source:  "Protivash et al. Alg. 1-2, 3.4, Table 4",
	Summary: "the whole table, row for row, from threshold range-count queries and binary search, at a claimed epsilon of queries x 1e-10",
	Run:     runIDPReconstruct,
	Score:   scoreReconstruction,
	Flags: func(f *pflag.FlagSet, o *Options) {
		thresholdFlags(f, o)
		p, _ := o.Params.(*ReconstructParams)
		if p == nil {
			p = &ReconstructParams{}
			o.Params = p
		}
		f.StringVar(&p.Search, "search", p.Search, "how a search cuts a range of a column's values: weighted (where half the rows the values found so far expect lie; the default) or halving (at half its values, the paper's)")
		f.StringVar(&p.Resume, "resume", p.Resume, "resume the run whose result (interrupted or stopped) was written to this file with --json: its completed columns are not asked again")
		f.IntVar(&o.Parallel, "parallel", max(o.Parallel, 1), "split each column's groups over this many connections to the firewall (1: one connection, the queries in sequence)")
	},
	Demo: func() Options {
		// One zip code's people (30 of the demo's 20,000 at seed 1), every
		// column, small domains first: 1,746 queries (10 of them the
		// domain checks), a few seconds over the wire. The whole table
		// (--where "") is about 43 queries per person: 862,168 for the
		// 20,000 rows before the domain checks (at most 20 more).
		return Options{
			Target:    Target{Table: dataset.PeopleTableName, Where: "zip = 2100"},
			Threshold: ThresholdSetup{GroupK: -1},
			Domains:   SmallDomainsFirst(PeopleDomains()),
		}
	},
}

func init() { register(IDPReconstruct) }

// PeopleDomains are the public domains of the demo people table's columns
// (all but the privacy unit), in table order, text categories sorted as
// SQLite compares them.
func PeopleDomains() []Domain {
	t := dataset.PeopleTable()
	var out []Domain
	for _, c := range t.Columns {
		switch {
		case c.Name == t.PrivacyUnit:
		case c.Categories != nil:
			out = append(out, Domain{Column: c.Name, Categories: sortedText(c.Categories)})
		case c.HasRange:
			out = append(out, Domain{Column: c.Name, Lo: c.Min, Hi: c.Max})
		}
	}
	return out
}

// SmallDomainsFirst orders domains by size, smallest first (ties keep their
// order): the paper's order for full reconstruction.
func SmallDomainsFirst(ds []Domain) []Domain {
	out := slices.Clone(ds)
	slices.SortStableFunc(out, func(a, b Domain) int {
		switch {
		case a.Size() < b.Size():
			return -1
		case a.Size() > b.Size():
			return 1
		}
		return 0
	})
	return out
}

// RecoveredRow is one distinct row the reconstruction found, with how many
// times it occurs. Values are in the order of the columns reconstructed, as
// text (integers in decimal).
type RecoveredRow struct {
	Values []string `json:"values"`
	Count  int64    `json:"count"`
}

// recGroup is a set of rows known to share the values chosen so far (value
// indexes into the domains, in order) and its count.
type recGroup struct {
	vals  []int64
	count int64
}

type reconstruction struct {
	o      Options
	oracle *ThresholdOracle
	q      *reconQuerier
	// outside is what the domain checks found beyond the domains' ends.
	outside []OutsideDomain
	// checkQueries is how many queries the domain checks sent.
	checkQueries int
	// resumed is the earlier run this one goes on from, nil for a fresh one.
	resumed *resumePoint
	// partial is the column a stop cut short, with its groups finished.
	partial *partialColumn
}

// where renders the predicate of a group: the target's predicate and one
// condition per column fixed so far. A value inside the domain is an
// equality; the first and last values are the open ranges the split counted
// them with (col < second value, col >= last value), so that rows beyond a
// too narrow domain stay in the group they were counted in, folded into the
// boundary value, and every later column's counts still add up. Under a
// domain that holds the data both read the same rows.
func (r *reconstruction) where(g recGroup) string {
	var parts []string
	if r.o.Target.Where != "" {
		parts = append(parts, "("+r.o.Target.Where+")")
	}
	for i, v := range g.vals {
		d := r.o.Domains[i]
		if v == 0 || v == d.Size()-1 {
			parts = append(parts, d.Range(v, v+1))
			continue
		}
		parts = append(parts, pglex.QuoteIdent(d.Column)+" = "+d.Literal(v))
	}
	return strings.Join(parts, " AND ")
}

func reconAnd(a, b string) string {
	if a == "" {
		return b
	}
	return a + " AND " + b
}

// split is Algorithm 2 with binary search over the value indexes [i, j) of
// d, known to hold s of the rows where selects, asked through oracle, each
// range cut where prior says (idp_reconstruct_prior.go; nil: at half its
// values): it appends each value's index and count to out.
func split(ctx context.Context, oracle *ThresholdOracle, where string, d Domain, prior *valuePrior, i, j, s int64, out []recGroup) ([]recGroup, error) {
	if s <= 0 {
		return out, nil
	}
	if j-i == 1 {
		return append(out, recGroup{vals: []int64{i}, count: s}), nil
	}
	m := prior.cut(i, j)
	left, err := oracle.Count(ctx, reconAnd(where, d.Range(i, m)), 0, s)
	if err != nil {
		return out, err
	}
	if out, err = split(ctx, oracle, where, d, prior, i, m, left, out); err != nil {
		return out, err
	}
	return split(ctx, oracle, where, d, prior, m, j, s-left, out)
}

// splitGroups splits every group by d, the ci-th column, with one worker
// per oracle (the first is r.oracle, the others views of it over further
// connections), and returns the groups split, in the order the groups and
// the values come, which is the sequential order whatever the workers'
// timing. Progress is reported group by group in that order too, as
// progress(gi, groups so far). The first worker to fail halts the others
// before their next query; the error returned is the first that was not
// a halt (errStopped when a stop came first), with the splits of the
// groups finished in order before it, done of them, kept for a resume.
func (r *reconstruction) splitGroups(ctx context.Context, oracles []*ThresholdOracle, d Domain, groups []recGroup, progress func(gi, next int)) (next []recGroup, done int, err error) {
	parts := make([][]recGroup, len(groups))
	finished := make([]bool, len(groups))
	var (
		mu       sync.Mutex
		taken    int // groups handed to workers
		reported int // groups whose progress was reported
		nextLen  int // groups split so far, over the groups reported
		firstErr error
		wg       sync.WaitGroup
	)
	batch := r.newSearchBatches(d, len(groups), &mu)
	take := func(step *lockstep) (int, *valuePrior, bool) {
		mu.Lock()
		defer mu.Unlock()
		for {
			if firstErr != nil || taken == len(groups) {
				return 0, nil, false
			}
			if taken < batch.end {
				taken++
				return taken - 1, batch.prior, true
			}
			batch.await(step, func() bool { return firstErr == nil && taken == batch.end && taken < len(groups) })
		}
	}
	work := func(oracle *ThresholdOracle, step *lockstep) {
		defer wg.Done()
		if step != nil {
			defer step.leave()
		}
		for {
			gi, prior, ok := take(step)
			if !ok {
				return
			}
			g := groups[gi]
			p, err := split(ctx, oracle, r.where(g), d, prior, 0, d.Size(), g.count, nil)
			mu.Lock()
			if err != nil {
				if firstErr == nil || errors.Is(firstErr, errStopped) && !errors.Is(err, errStopped) {
					firstErr = err
				}
				r.q.halt()
				batch.wake()
				mu.Unlock()
				return
			}
			parts[gi], finished[gi] = p, true
			for reported < len(groups) && finished[reported] && firstErr == nil {
				nextLen += len(parts[reported])
				if progress != nil {
					progress(reported, nextLen)
				}
				reported++
			}
			if reported == batch.end {
				batch.next(parts)
			}
			mu.Unlock()
		}
	}
	searches, steps := r.searches(oracles)
	wg.Add(len(searches))
	for _, step := range steps {
		if step != nil {
			step.join() // before any search asks: a batch waits for it
		}
	}
	for i, o := range searches[1:] {
		go work(o, steps[i+1])
	}
	work(searches[0], steps[0])
	wg.Wait()
	r.gatherInconsistent(searches)
	// Without an error every group was reported: reported is len(groups).
	return joinSplits(groups[:reported], parts), reported, firstErr
}

// gatherInconsistent counts the searches' inconsistent answers on
// r.oracle.
func (r *reconstruction) gatherInconsistent(searches []*ThresholdOracle) {
	for _, o := range searches {
		if o != r.oracle {
			r.oracle.Inconsistent += o.Inconsistent
			o.Inconsistent = 0
		}
	}
}

// joinSplits is each group extended by each of its splits' values, in
// the order of the groups and then of their splits.
func joinSplits(groups []recGroup, parts [][]recGroup) (next []recGroup) {
	for gi, g := range groups {
		for _, p := range parts[gi] {
			next = append(next, recGroup{vals: append(slices.Clip(g.vals), p.vals[0]), count: p.count})
		}
	}
	return next
}

// searches are the searches that split a column's groups at once: one per
// connection's oracle, or, with o.Pipeline above 1, that many per
// connection, each a view of the connection's oracle through a slot of its
// lockstep (returned beside it, nil for a search alone on its connection),
// so that each connection has that many statements in flight.
func (r *reconstruction) searches(oracles []*ThresholdOracle) ([]*ThresholdOracle, []*lockstep) {
	depth := max(r.o.Pipeline, 1)
	if depth == 1 {
		return oracles, make([]*lockstep, len(oracles))
	}
	var views []*ThresholdOracle
	var steps []*lockstep
	for _, o := range oracles {
		step := newLockstep(o.q)
		for i := range depth {
			views = append(views, o.via(step.slot(i)))
			steps = append(steps, step)
		}
	}
	return views, steps
}

// workers are the oracles of a run over o.Parallel connections: r.oracle,
// then a view of it over each further connection o.Reconnect opens. closeAll
// releases those connections.
func (r *reconstruction) workers(ctx context.Context) (oracles []*ThresholdOracle, closeAll func(), err error) {
	oracles = []*ThresholdOracle{r.oracle}
	var closers []func()
	closeAll = func() {
		for _, c := range closers {
			c()
		}
	}
	for i := 1; i < r.o.Parallel; i++ {
		c, closeC, err := r.o.Reconnect(ctx)
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("opening connection %d of %d: %w", i+1, r.o.Parallel, err)
		}
		closers = append(closers, closeC)
		v, err := r.oracle.Through(ctx, r.q.through(c))
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("setting up connection %d of %d: %w", i+1, r.o.Parallel, err)
		}
		oracles = append(oracles, v)
	}
	return oracles, closeAll, nil
}

func runIDPReconstruct(ctx context.Context, q Querier, o Options) (*Result, error) {
	if err := checkReconOptions(o); err != nil {
		return nil, err
	}
	resume, err := resumeFrom(o)
	if err != nil {
		return nil, err
	}
	if resume != nil && o.Threshold.Rows <= 0 {
		o.Threshold.Rows = resume.tableSize // known: not searched for again
	}
	cq := newReconQuerier(q)
	res := &Result{Details: map[string]any{"columns": []string{}}}
	oracle, err := NewThresholdOracle(ctx, cq, o.Target.Table, o.Threshold)
	if err != nil {
		if errors.Is(err, errStopped) {
			res.Note += fmt.Sprintf("stopped before the table size was known: %v", cq.stopped())
			return res, nil
		}
		return nil, err
	}
	if err := resume.checkModel(oracle.K); err != nil {
		return nil, err
	}
	res.Mechanism = oracle.Mechanism
	if oracle.Note != "" {
		res.Note = oracle.Note + ". "
	}
	r := &reconstruction{o: o, oracle: oracle, q: cq}
	oracles, closeAll, err := r.workers(ctx)
	if err != nil {
		return nil, err
	}
	defer closeAll()

	order := make([]string, len(o.Domains))
	for i, d := range o.Domains {
		order[i] = d.Column
	}
	details := res.Details
	details["k"], details["table_size"], details["columns_order"] = oracle.K, oracle.N, order
	details["setup_queries"] = cq.sent()
	if len(oracles) > 1 {
		details["connections"] = len(oracles)
	}
	if resume != nil {
		details["resumed_from"], details["resumed_columns"], details["earlier_queries"] = resume.path, resume.cols, resume.queries
		details["target_rows"] = resume.n0
		r.outside, r.resumed = resume.outside, resume
		return r.columns(ctx, res, oracles, resume.groups, resume.cols, resume.n0)
	}
	// The starting group: the target's rows.
	n0 := oracle.N
	if o.Target.Where != "" {
		before := cq.sent()
		n0, err = oracle.Count(ctx, o.Target.Where, 0, oracle.N)
		details["target_size_queries"] = cq.sent() - before
		if err != nil {
			return r.finish(res, nil, 0, 0, err)
		}
	}
	details["target_rows"] = n0
	return r.columns(ctx, res, oracles, []recGroup{{count: n0}}, 0, n0)
}

// checkReconOptions refuses what idp-reconstruct cannot run with.
func checkReconOptions(o Options) error {
	if o.Target.Table == "" || len(o.Domains) == 0 {
		return errors.New("idp-reconstruct needs a table (--table) and the public domains of the columns to rebuild (--domain, in order)")
	}
	if p, _ := o.Params.(*ReconstructParams); p != nil {
		if err := checkSearch(p.Search); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for _, d := range o.Domains {
		if d.Size() < 1 {
			return fmt.Errorf("column %q has an empty domain", d.Column)
		}
		if seen[strings.ToLower(d.Column)] {
			return fmt.Errorf("column %q is named twice", d.Column)
		}
		seen[strings.ToLower(d.Column)] = true
	}
	if o.Parallel < 0 {
		return fmt.Errorf("--parallel %d: give at least 1 connection", o.Parallel)
	}
	if o.Parallel > 1 && o.Reconnect == nil {
		return fmt.Errorf("--parallel %d needs further connections to the firewall, which this run cannot open", o.Parallel)
	}
	return nil
}

// columns splits groups, known over the first from columns, by each column
// left in turn, and finishes the result with the groups of the last column
// completed.
//
// A column a resumed run had cut short (r.resumed.partial) is not split
// again for the groups it had finished. A column this run cuts short keeps
// its finished groups in r.partial, for the next resume.
func (r *reconstruction) columns(ctx context.Context, res *Result, oracles []*ThresholdOracle, groups []recGroup, from int, n0 int64) (*Result, error) {
	o, cq := r.o, r.q
	perColumn := map[string]int{}
	groupsAfter := map[string]int{}
	res.Details["queries_per_column"], res.Details["groups_per_column"] = perColumn, groupsAfter
	// Progress: groups split so far out of a lower bound on the groups to
	// split (every group now known splits at least once per column left).
	done := 0
	for ci := from; ci < len(o.Domains); ci++ {
		d := o.Domains[ci]
		if o.Stage != nil {
			o.Stage(fmt.Sprintf("column %d of %d (%s)", ci+1, len(o.Domains), d.Column))
		}
		before := cq.sent()
		var kept []recGroup // splits of the first skip groups, from a resume
		skip := 0
		if p := r.resumed; p != nil && ci == from && p.partialDone > 0 {
			kept, skip = p.partial, p.partialDone
		}
		progress := func(gi, next int) {
			done++
			if o.Progress != nil {
				left := len(groups) - skip - gi - 1
				next += len(kept)
				o.Progress(done, done+left+(next+left)*(len(o.Domains)-ci-1))
			}
		}
		split, splitDone, err := r.splitGroups(ctx, oracles, d, groups[skip:], progress)
		next := append(slices.Clip(kept), split...)
		if err != nil {
			perColumn[d.Column] = cq.sent() - before
			r.partial = &partialColumn{column: ci, done: skip + splitDone, groups: next}
			return r.finish(res, groups, ci, n0, err)
		}
		groupsAfter[d.Column] = len(next)
		groups = next
		// The first and last values' ranges are open (col < second value,
		// col >= last value), so rows outside a too narrow domain land
		// there: count them where those values hold rows.
		folded, err := r.checkDomain(ctx, d, ci, groups)
		r.outside = append(r.outside, folded...)
		perColumn[d.Column] = cq.sent() - before
		if err != nil {
			return r.finish(res, groups, ci+1, n0, err)
		}
	}
	return r.finish(res, groups, len(o.Domains), n0, nil)
}

// finish fills the result from the groups of the last column completed
// (cols of them): the rows recovered over those columns. A run the firewall,
// the query limit or an error cut short keeps them and says why it stopped:
// hundreds of queries in, the rows found so far are worth more than the
// error alone.
func (r *reconstruction) finish(res *Result, groups []recGroup, cols int, n0 int64, err error) (*Result, error) {
	if err != nil && !errors.Is(err, errStopped) {
		r.q.setStop(err)
	}
	d := res.Details
	names := make([]string, cols)
	for i := range names {
		names[i] = r.o.Domains[i].Column
	}
	rows, total := r.rowsOf(groups, cols)
	res.Recovered, res.Estimate = total, float64(total)
	d["columns"] = names
	d["rows"] = rows
	d["groups"] = len(rows) // distinct rows
	d["inconsistent_searches"] = r.oracle.Inconsistent
	d["queries"] = r.q.sent()
	if n0 > 0 {
		d["queries_per_person"] = float64(r.q.sent()) / float64(n0)
	}
	if cells := total * int64(cols); cells > 0 {
		d["queries_per_data_element"] = float64(r.q.sent()) / float64(cells)
	}
	sample := min(len(rows), 5)
	show := make([]string, sample)
	for i := range show {
		show[i] = fmt.Sprintf("%s x%d", strings.Join(rows[i].Values, ","), rows[i].Count)
	}
	d["sample"] = show
	if err != nil {
		stop := r.q.stopped()
		why := fmt.Sprint(stop)
		if code := string(pgerror.SQLState(stop)); code != "" && !strings.Contains(why, code) {
			why += " (SQLSTATE " + code + ")"
		}
		res.Note += fmt.Sprintf("stopped after %d queries (%s); kept the rows over the %d columns completed", r.q.sent(), why, cols)
		if p := r.partial; p != nil && p.done > 0 {
			partRows, _ := r.rowsOf(p.groups, p.column+1)
			d["partial_column"] = savedPartial{Column: r.o.Domains[p.column].Column, GroupsDone: p.done, Rows: partRows}
			res.Note += fmt.Sprintf(", and %s for %d of their %d groups", r.o.Domains[p.column].Column, p.done, len(rows))
		}
		res.Note += " (written with --json FILE, --resume FILE goes on from them)"
	}
	if from, ok := d["resumed_from"].(string); ok {
		kept := fmt.Sprintf("its %d columns", d["resumed_columns"])
		if p := r.resumed; p != nil && p.partialDone > 0 {
			kept += fmt.Sprintf(" and %d groups of %s", p.partialDone, r.o.Domains[p.cols].Column)
		}
		res.Note = appendSentence(res.Note, fmt.Sprintf("Resumed from %s: %s were taken as found there (%d queries in earlier runs, not counted here).",
			from, kept, d["earlier_queries"]))
	}
	d["domain_check_queries"] = r.checkQueries
	if len(r.outside) > 0 {
		d["outside_domain"] = r.outside
		res.Note = appendSentence(res.Note, outsideNote(r.outside))
	}
	if r.oracle.Inconsistent > 0 {
		res.Note += fmt.Sprintf(" %d searches contradicted the threshold model (k = %d), so the counts are not to be trusted.", r.oracle.Inconsistent, r.oracle.K)
	}
	if m := res.Mechanism; m != "" && m != "idp" && m != "exact" {
		res.Note += fmt.Sprintf(" The firewall runs %s, which the threshold model (k = %d) does not describe: the rows are what the answers implied, not necessarily the table.", m, r.oracle.K)
	}
	res.Note = strings.TrimSpace(res.Note)
	return res, nil
}

// rowsOf is groups over the first cols columns as rows of values, and the
// rows they hold.
func (r *reconstruction) rowsOf(groups []recGroup, cols int) (rows []RecoveredRow, total int64) {
	for _, g := range groups {
		if cols == 0 || len(g.vals) != cols {
			continue
		}
		vals := make([]string, cols)
		for i, v := range g.vals {
			vals[i] = reconValue(r.o.Domains[i], v)
		}
		rows = append(rows, RecoveredRow{Values: vals, Count: g.count})
		total += g.count
	}
	return rows, total
}

// reconValue is the i-th value of d as text, as the truth database gives it
// with CAST(col AS TEXT).
func reconValue(d Domain, i int64) string {
	if d.Categories != nil {
		return d.Categories[i]
	}
	return strconv.FormatInt(d.Lo+i, 10)
}
