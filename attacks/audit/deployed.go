package audit

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"countwall/attacks"
	"countwall/config"
	"countwall/dataset"
	"countwall/pgerror"
	"countwall/pglex"
	"countwall/proxy"
	"countwall/proxy/state"
)

// The audit of the firewall as deployed (`countwall audit --config C`): the
// config's mechanism with its parameters, budget shares, delta cap and
// per-person bounds, on neighbours of the config's own table (a real unit
// removed; a unit with several rows; a unit's value stored with another
// storage class; the unit at each of the firewall's edges, edges.go), over
// the query shapes an analyst sends about that person, and with two
// distinguishers beside the answers: whether the statement was refused
// (its SQLSTATE) and how long its answer took.

// DeployedOptions say how the deployed firewall is audited.
type DeployedOptions struct {
	Config     *config.Config
	Table      string // the audited table; the config's only one when empty
	UnitIndex  int64  // which unit to audit: the n-th in the unit column's order
	Dir        string // scratch: the neighbours, configs and state files
	Trials     int
	Confidence float64
	// TimeTrials is how many statements each timed test sends to each
	// world (Trials when 0), TimeBlock about how many of them each
	// deployment answers (DefaultTimeBlock when 0).
	TimeTrials int
	TimeBlock  int
	// GroupLimit is how many distinct values the groups edge's column
	// holds without the person (no groups edge when 0), GroupTrials that
	// edge's samples per world for every test (Trials when 0).
	GroupLimit  int64
	GroupTrials int
	// SwitchRows are counts of holders to audit beside the switch points
	// the audit finds itself.
	SwitchRows []int64
	// Edges restricts the audit to these neighbours (every one when nil):
	// control, removed, several-rows, other-storage, invalid-utf8, blob,
	// real-in-integer, text-in-integer, real-unit, switch (every switch
	// point) or switch-N, math, groups.
	Edges []string
	Seed  uint64 // orders the timed statements' pairs
	// Mechanisms are audited one after the other, each with the config's
	// parameters for it (mechanisms.NAME); every standard one when nil.
	Mechanisms []string
	Progress   func(label string) func(done, total int)

	// wrap, in tests, stands between the audit and the firewall it deploys
	// on each edge's two files.
	wrap func(d Deployer, e edge, files [2]string) Deployer
}

// RunDeployed audits the configured firewall on each neighbour.
func RunDeployed(ctx context.Context, o DeployedOptions) (*Report, error) {
	start := time.Now()
	cfg := o.Config
	if strings.Contains(cfg.Database, "://") {
		return nil, errors.New("audit --config reads the protected table from a SQLite file; a PostgreSQL store cannot be audited this way")
	}
	table, tc, err := auditedTable(cfg, o.Table)
	if err != nil {
		return nil, err
	}
	unit, person, err := dataset.PersonOf(ctx, cfg.Database, table, tc.PrivacyUnit, o.UnitIndex)
	if err != nil {
		return nil, err
	}
	cols := targetColumns(tc, person)
	cell := map[string]any{}
	for _, c := range cols {
		cell[c] = person[c]
	}
	cellCount, err := dataset.CountMatching(ctx, cfg.Database, table, cell)
	if err != nil {
		return nil, err
	}
	facts, rows, err := dataset.ColumnsOf(ctx, cfg.Database, table, tc.PrivacyUnit, unit)
	if err != nil {
		return nil, err
	}
	groupTrials := o.GroupTrials
	if groupTrials < 1 {
		groupTrials = o.Trials
	}
	edges, notes := deployedEdges(edgeInputs{table: table, tc: tc, unit: unit, person: person, cols: cols, cellCount: cellCount,
		facts: facts, rows: rows, groupLimit: o.GroupLimit, groupTrials: groupTrials, switchRows: o.SwitchRows})
	edges, err = chosenEdges(edges, o.Edges)
	if err != nil {
		return nil, err
	}
	names := o.Mechanisms
	if names == nil {
		for _, m := range Standard(0, 0) {
			names = append(names, m.Name)
		}
	}
	timeTrials := o.TimeTrials
	if timeTrials < 1 {
		timeTrials = o.Trials
	}
	rep := &Report{Trials: o.Trials, TimeTrials: timeTrials, Confidence: o.Confidence, Notes: notes,
		Config: fmt.Sprintf("table %s, unit %v, the config's shares (epsilon %g, delta %g) and delta cap %g", table, unit, cfg.Budget.Epsilon.Default, cfg.Budget.Delta.Default, cfg.Budget.DeltaCap)}
	seen := map[string]bool{}
	for _, e := range edges {
		for _, t := range e.tests {
			if !seen[t.Name] {
				seen[t.Name] = true
				rep.Tests = append(rep.Tests, TestInfo{Name: t.Name, Description: t.Description})
			}
		}
	}
	worlds, err := writeNeighbours(ctx, o, edges)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if err := auditMechanism(ctx, o, name, table, edges, worlds, rep); err != nil {
			return nil, err
		}
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// chosenEdges keeps the edges named (every one when names is nil); switch
// names every switch point.
func chosenEdges(edges []edge, names []string) ([]edge, error) {
	if names == nil {
		return edges, nil
	}
	var out []edge
	for _, n := range names {
		found := false
		for _, e := range edges {
			if e.name == n || (n == "switch" && strings.HasPrefix(e.name, "switch-")) {
				out, found = append(out, e), true
			}
		}
		if !found {
			known := make([]string, len(edges))
			for i, e := range edges {
				known[i] = e.name
			}
			return nil, fmt.Errorf("no neighbour %q for this table and person (have %s)", n, strings.Join(known, ", "))
		}
	}
	return out, nil
}

// writeNeighbours writes the two worlds of each edge into o.Dir.
func writeNeighbours(ctx context.Context, o DeployedOptions, edges []edge) (map[string][2]string, error) {
	worlds := map[string][2]string{}
	for _, e := range edges {
		var dbs [2]string
		for _, w := range []World{Without, With} {
			dbs[w] = filepath.Join(o.Dir, fmt.Sprintf("%s-%s.db", e.name, w))
			if err := dataset.WriteNeighbourOf(ctx, o.Config.Database, dbs[w], e.kind, e.spec, w == With && !e.same); err != nil {
				return nil, fmt.Errorf("the %s neighbour: %w", e.name, err)
			}
		}
		worlds[e.name] = dbs
	}
	return worlds, nil
}

// auditMechanism audits the config under the mechanism name, with the
// config's parameters for it, on each edge, and adds the results to rep.
func auditMechanism(ctx context.Context, o DeployedOptions, name, table string, edges []edge, worlds map[string][2]string, rep *Report) error {
	cfg := o.Config
	mcfg := *cfg
	mcfg.Mechanism = config.Mechanism{Name: name, Params: cfg.MechanismSections[name]}
	if name == cfg.Mechanism.Name {
		mcfg.Mechanism.Params = cfg.Mechanism.Params
	}
	for _, e := range edges {
		var d Deployer = &configDeployer{base: &mcfg, table: table, dir: o.Dir, kind: name + "-" + e.name, databases: worlds[e.name]}
		if o.wrap != nil {
			d = o.wrap(d, e, worlds[e.name])
		}
		label := fmt.Sprintf("%s (%s)", name, e.name)
		opts := Options{Trials: o.Trials, TimeTrials: o.TimeTrials, TimeBlock: o.TimeBlock, Seed: o.Seed, Confidence: o.Confidence, Sticky: stickyMechanisms[name], Distinguishers: e.tests}
		if e.trials > 0 {
			opts.Trials, opts.TimeTrials = e.trials, e.trials
		}
		if o.Progress != nil {
			opts.Progress = o.Progress(label)
		}
		res, err := Run(ctx, label, d, opts)
		if err != nil {
			return fmt.Errorf("auditing %s: %w", label, err)
		}
		rep.Results = append(rep.Results, res)
	}
	return nil
}

// stickyMechanisms key their noise with the firewall secret: each trial
// deploys anew, with a new secret.
var stickyMechanisms = map[string]bool{"cellkey": true, "layered": true}

func auditedTable(cfg *config.Config, name string) (string, config.Table, error) {
	if name != "" {
		tc, ok := cfg.Tables[strings.ToLower(name)]
		if !ok {
			return "", config.Table{}, fmt.Errorf("table %q is not in the config", name)
		}
		return strings.ToLower(name), tc, nil
	}
	if len(cfg.Tables) != 1 {
		names := make([]string, 0, len(cfg.Tables))
		for n := range cfg.Tables {
			names = append(names, n)
		}
		sort.Strings(names)
		return "", config.Table{}, fmt.Errorf("the config has %d tables (%s): name one with --table", len(names), strings.Join(names, ", "))
	}
	for n, tc := range cfg.Tables {
		return n, tc, nil
	}
	return "", config.Table{}, nil
}

// deployedTests are the distinguishers aimed at one person: a COUNT, a
// threshold and a GROUP BY over the person's cell (two columns with
// declared domains where the config has them), each scored by its answer
// and by whether it was refused, and the COUNT also by its answer time. It
// also returns the text column whose storage the other-storage neighbour
// changes ("" when there is none).
//
// The threshold is set at the cell's count with the person (cellCount): a
// mechanism whose noise depends on how close a count is to its threshold
// (idp) answers it exactly without the person.
func deployedTests(table string, tc config.Table, person map[string]any, cols []string, cellCount int64) ([]Distinguisher, string) {
	var conds []string
	storage := ""
	for _, c := range cols {
		conds = append(conds, pglex.QuoteIdentAlways(c)+" = "+literal(person[c]))
		if _, isText := person[c].(string); isText && storage == "" {
			storage = c
		}
	}
	where := ""
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	from := " FROM " + pglex.QuoteIdentAlways(table)
	countSQL := "SELECT COUNT(*)" + from + where
	tests := []Distinguisher{
		answerScore("count", "one count of the person's cell: "+countSQL, countSQL),
		refusalScore("count-refused", "that count's SQLSTATE (0 when answered)", countSQL),
		timeScore("count-time", "how long that count takes to answer, in microseconds", countSQL),
	}
	thresholdSQL := fmt.Sprintf("SELECT COUNT(*) > %d", cellCount) + from + where
	tests = append(tests, answerScore("threshold", "the threshold "+thresholdSQL, thresholdSQL),
		refusalScore("threshold-refused", "that threshold's SQLSTATE", thresholdSQL))
	if len(cols) > 0 {
		g := cols[0]
		groupSQL := "SELECT " + pglex.QuoteIdentAlways(g) + ", COUNT(*)" + from
		if len(conds) > 1 {
			groupSQL += " WHERE " + strings.Join(conds[1:], " AND ")
		}
		groupSQL += " GROUP BY " + pglex.QuoteIdentAlways(g)
		tests = append(tests,
			groupScore("group", "the person's row of "+groupSQL+" (0 when absent)", groupSQL, groupText(person[g])),
			keysScore("group-keys", "how many rows that GROUP BY returns", groupSQL),
			refusalScore("group-refused", "that GROUP BY's SQLSTATE", groupSQL))
	}
	return append(tests, sumTests(tc, from+where)...), storage
}

// sumTests are a SUM and an AVG of the person's cell over the first column
// with declared bounds (none when the config declares none), each scored
// by its answer and by whether it was refused.
func sumTests(tc config.Table, fromWhere string) []Distinguisher {
	cols := make([]string, 0, len(tc.ValueBounds))
	for c := range tc.ValueBounds {
		cols = append(cols, c)
	}
	if len(cols) == 0 {
		return nil
	}
	sort.Strings(cols)
	col := pglex.QuoteIdentAlways(cols[0])
	sumSQL, avgSQL := "SELECT SUM("+col+")"+fromWhere, "SELECT AVG("+col+")"+fromWhere
	return []Distinguisher{
		answerScore("sum", "one sum of the person's cell: "+sumSQL, sumSQL),
		refusalScore("sum-refused", "that sum's SQLSTATE", sumSQL),
		answerScore("avg", "one average of the person's cell: "+avgSQL, avgSQL),
		refusalScore("avg-refused", "that average's SQLSTATE", avgSQL),
	}
}

// targetColumns are the columns the tests aim at the person with: two with
// declared domains where the config has them, else two others, never the
// unit and never one the person holds NULL in.
func targetColumns(tc config.Table, person map[string]any) []string {
	var cols []string
	for c := range tc.Domains {
		if c != tc.PrivacyUnit && person[c] != nil {
			cols = append(cols, c)
		}
	}
	sort.Strings(cols)
	if len(cols) == 0 {
		for c, v := range person {
			if c != tc.PrivacyUnit && v != nil {
				cols = append(cols, c)
			}
		}
		sort.Strings(cols)
	}
	return cols[:min(2, len(cols))]
}

func answerScore(name, desc, sql string) Distinguisher {
	return Distinguisher{Name: name, Description: desc, Queries: 1, Score: func(ctx context.Context, q attacks.Querier) (float64, error) {
		v, err := attacks.Count(ctx, q, sql)
		if attacks.SQLState(err) != "" {
			return math.Inf(-1), nil // refused: scored apart from every answer
		}
		return v, err
	}}
}

// refusalScore scores a statement by its SQLSTATE: 0 when it is answered,
// else the code read as a base-36 number, so that two worlds refused with
// different codes are told apart as well as a refusal from an answer.
func refusalScore(name, desc, sql string) Distinguisher {
	return Distinguisher{Name: name, Description: desc, Queries: 1, Score: func(ctx context.Context, q attacks.Querier) (float64, error) {
		_, err := q.Query(ctx, sql)
		if code := attacks.SQLState(err); code != "" {
			return sqlstateScore(code), nil
		}
		return 0, err
	}}
}

// sqlstateScore is a SQLSTATE read as a base-36 number (at least 1).
func sqlstateScore(code pgerror.Code) float64 {
	v, err := strconv.ParseUint(string(code), 36, 64)
	if err != nil || v == 0 {
		return 1
	}
	return float64(v)
}

func timeScore(name, desc, sql string) Distinguisher {
	return Distinguisher{Name: name, Description: desc, Queries: 1, Timed: true, Score: func(ctx context.Context, q attacks.Querier) (float64, error) {
		start := time.Now()
		_, err := q.Query(ctx, sql)
		if err != nil && attacks.SQLState(err) == "" {
			return 0, err
		}
		return float64(time.Since(start).Nanoseconds()) / 1e3, nil
	}}
}

func groupScore(name, desc, sql, key string) Distinguisher {
	return Distinguisher{Name: name, Description: desc, Queries: 1, Score: func(ctx context.Context, q attacks.Querier) (float64, error) {
		rows, err := q.Query(ctx, sql)
		if attacks.SQLState(err) != "" {
			return math.Inf(-1), nil
		}
		if err != nil {
			return 0, err
		}
		for i, r := range rows.Values {
			if len(r) > 0 && r[0] == key {
				return rows.Float(i, len(rows.Columns)-1)
			}
		}
		return 0, nil
	}}
}

func keysScore(name, desc, sql string) Distinguisher {
	return Distinguisher{Name: name, Description: desc, Queries: 1, Score: func(ctx context.Context, q attacks.Querier) (float64, error) {
		rows, err := q.Query(ctx, sql)
		if attacks.SQLState(err) != "" {
			return -1, nil
		}
		if err != nil {
			return 0, err
		}
		return float64(len(rows.Values)), nil
	}}
}

// groupText is a value as a GROUP BY row shows it.
func groupText(v any) string {
	switch v := v.(type) {
	case []byte:
		return string(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// literal renders a value the person holds as an SQL literal.
func literal(v any) string {
	switch v := v.(type) {
	case int64:
		return fmt.Sprint(v)
	case float64:
		return fmt.Sprint(v)
	case []byte:
		return "'" + strings.ReplaceAll(string(v), "'", "''") + "'"
	default:
		return "'" + strings.ReplaceAll(fmt.Sprint(v), "'", "''") + "'"
	}
}

// configDeployer deploys the config's firewall on one world: the same
// mechanism, parameters, shares, delta cap and table settings, with the
// world's file as the protected database, a scratch state, and an epsilon
// cap no audit reaches (a cap limits how much an analyst composes, not what
// one test shows).
type configDeployer struct {
	base      *config.Config
	table     string
	dir, kind string
	databases [2]string
}

func (d *configDeployer) Deploy(ctx context.Context, w World) (Deployment, error) {
	cfg := *d.base
	cfg.Database = d.databases[w]
	cfg.State = filepath.Join(d.dir, fmt.Sprintf("state-%s-%s.db", d.kind, w))
	cfg.Tables = map[string]config.Table{d.table: d.base.Tables[d.table]}
	cfg.Analysts = nil
	cfg.Budget.EpsilonCap = 1e12
	cfg.Budget.Reserve = 1000
	cfg.Audit.Sync = "normal"
	secret := make([]byte, state.SecretBytes)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	e, err := proxy.Open(ctx, &cfg, proxy.Options{Secret: secret})
	if err != nil {
		return nil, fmt.Errorf("deploying the config on the table %s the person: %w", w, err)
	}
	return &engineDeployment{engine: e}, nil
}
