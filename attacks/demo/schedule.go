package demo

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"

	"countwall/attacks"
	"countwall/attacks/report"
	"countwall/dataset"
)

// suiteWidth is how many firewalls the attack suite runs at once. Each
// firewall has its own port, state database and analysts, and no attack
// reads another firewall's answers (the exact release firewall, which
// prior-release reads, runs beside them all), so two run side by side: one
// per core of a small machine, and the one waiting for a commit leaves the
// core to the other. The card lists them in plan order all the same.
const suiteWidth = 2

// runAttacks runs the attack suite over the wire: for each firewall
// setting a loopback server with SCRAM authentication, one analyst per
// attack (so each starts with a full budget), and the attacks scored against
// the protected database. The prior-release attack reads its earlier exact
// release from a firewall of its own (the exact release firewall, analyst
// publisher), whose audit is combined with the attacked firewall's when
// audit risk reads that. It returns the report card's rows in plan order,
// audit risk's runs on each firewall's state and the published release.
func runAttacks(ctx context.Context, o Options, dbPath string) ([]report.Row, []report.RiskRun, *published, error) {
	order, bySetting := planned()
	people, err := PeopleTables()
	if err != nil {
		return nil, nil, nil, err
	}
	suite := &suiteRun{o: o, dbPath: dbPath, people: people, bySetting: bySetting}
	if err := suite.writeGenomes(ctx, order); err != nil {
		return nil, nil, nil, err
	}
	stopRelease := func() {}
	if slices.ContainsFunc(order, func(s string) bool { return slices.Contains(bySetting[s], attacks.PriorRelease.Name) }) {
		if suite.release, err = StartFirewall(ctx, o.Dir, dbPath, people, Settings["exact release"], []string{publisher}); err != nil {
			return nil, nil, nil, fmt.Errorf("starting the exact release firewall: %w", err)
		}
		stopRelease = sync.OnceFunc(suite.release.Stop)
		defer stopRelease()
	}
	suite.countAttacks(order)
	outcomes := make([]settingOutcome, len(order))
	err = eachAtOnce(ctx, len(order), suiteWidth, func(ctx context.Context, i int) error {
		var err error
		outcomes[i], err = suite.run(ctx, order[i])
		return err
	})
	stopRelease()
	if err != nil {
		// An interrupted attack keeps its result; the suite stops.
		return nil, nil, nil, err
	}
	results := map[[2]string]report.Row{}
	pending := make([]riskPending, len(order))
	for i, name := range order {
		for attack, row := range outcomes[i].rows {
			results[[2]string{attack, name}] = row
		}
		pending[i] = outcomes[i].pending
	}
	runs, pub, err := assessPending(ctx, pending, suite.release)
	if err != nil {
		return nil, nil, nil, err
	}
	var rows []report.Row
	for _, p := range AttackPlan {
		for _, s := range p.Settings {
			if row, ok := results[[2]string{p.Attack, s}]; ok {
				rows = append(rows, row)
			}
		}
	}
	return rows, runs, pub, nil
}

// suiteRun is what the settings' runs of the suite share.
type suiteRun struct {
	o         Options
	dbPath    string
	people    map[string]any // the people table's config section
	bySetting map[string][]string
	release   *Firewall // the exact release firewall, or nil

	genomesPath string         // the genomes table for tracing, once written
	genomes     map[string]any // its config section

	mu       sync.Mutex
	done     int                   // attacks run, of total
	total    int                   // attacks in the plan
	progress func(done, total int) // the suite's progress, or nil
}

// settingOutcome is one firewall's part of the suite: its attacks' rows
// and the state audit risk reads once the suite is over.
type settingOutcome struct {
	rows    map[string]report.Row // by attack
	pending riskPending
}

// writeGenomes writes the genomes table for tracing when a setting of
// order fronts it, before any firewall starts: two firewalls at once must
// not both write it.
func (r *suiteRun) writeGenomes(ctx context.Context, order []string) error {
	if !slices.ContainsFunc(order, func(s string) bool { return Settings[s].Genomes }) {
		return nil
	}
	r.genomesPath = filepath.Join(r.o.Dir, "genomes.db")
	if err := writeGenomes(ctx, r.genomesPath); err != nil {
		return err
	}
	var err error
	r.genomes, err = tables(dataset.GenomesTable(genomesSNPs))
	return err
}

// countAttacks starts the suite's progress: one step an attack.
func (r *suiteRun) countAttacks(order []string) {
	for _, name := range order {
		r.total += len(r.bySetting[name])
	}
	r.progress = r.o.progress("attack suite")
}

// attackDone counts one more attack run on the suite's progress.
func (r *suiteRun) attackDone() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done++
	if r.progress != nil {
		r.progress(r.done, r.total)
	}
}

// run starts the firewall of setting name, runs its attacks one after
// another and stops it.
func (r *suiteRun) run(ctx context.Context, name string) (settingOutcome, error) {
	s := Settings[name]
	db, tableSection := r.dbPath, r.people
	if s.Genomes {
		db, tableSection = r.genomesPath, r.genomes
	}
	fw, err := StartFirewall(ctx, r.o.Dir, db, tableSection, s, r.bySetting[name])
	if err != nil {
		return settingOutcome{}, fmt.Errorf("starting the %s firewall: %w", s.Label, err)
	}
	fw.release = r.release
	out := settingOutcome{rows: map[string]report.Row{}}
	for _, attack := range r.bySetting[name] {
		out.rows[attack] = fw.run(ctx, attack, db, nil)
		r.attackDone()
	}
	fw.Stop()
	if err := ctx.Err(); err != nil {
		return out, err
	}
	plusOne, _ := s.Params["plus_one"].(bool)
	out.pending = riskPending{s.Label, fw.StatePath, db, plusOne, slices.Contains(r.bySetting[name], attacks.PriorRelease.Name)}
	return out, nil
}

// eachAtOnce calls fn for 0 to n-1, up to width calls at once, taking
// them in order as calls end. The first error (or the end of ctx) starts
// no further call, ends ctx for the calls under way, and is returned.
func eachAtOnce(ctx context.Context, n, width int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		next  int
		first error
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = err
			cancel()
		}
	}
	take := func() (int, bool) {
		if err := ctx.Err(); err != nil {
			fail(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if first != nil || next >= n {
			return 0, false
		}
		next++
		return next - 1, true
	}
	var wg sync.WaitGroup
	for range max(1, min(width, n)) {
		wg.Go(func() {
			for i, ok := take(); ok; i, ok = take() {
				if err := fn(ctx, i); err != nil {
					fail(err)
				}
			}
		})
	}
	wg.Wait()
	return first
}
