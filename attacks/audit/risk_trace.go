package audit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"countwall/dataset"
	"countwall/pglex"
	"countwall/proxy/risk"
	"countwall/proxy/state/release"
)

// TraceOptions say how Trace runs the tracing test on the people of the
// protected table: what the attacker is assumed to know and where the
// threshold sits. The zero value is the attack's own defaults.
type TraceOptions struct {
	// Population is the file of samples of the population the table was
	// drawn from, not in it (the side file `countwall gen genomes` writes);
	// "" looks for it beside the protected database.
	Population string
	// Units names each table's privacy-unit column, whose values are the
	// candidates; a table countwall generates needs none.
	Units map[string]string
	// References is how many reference samples centre the statistic
	// (0 means the attack's 100) and FPR the false-positive rate the
	// threshold is calibrated at on the samples left (0 means 0.05).
	References int
	FPR        float64
}

func (t TraceOptions) withDefaults() TraceOptions {
	if t.References <= 0 {
		t.References = 100
	}
	if t.FPR <= 0 {
		t.FPR = 0.05
	}
	return t
}

// Trace runs the tracing attack's test (risk.TracingTest, Dwork et al.
// 3.2) on the noisy marginals each analyst holds, with every person of the
// protected table as a candidate: it adds a finding for each person the
// released answers trace (score at or above the attack's threshold), and
// on the release's flag, how many were traced and the false-positive rate
// on held-out non-members. It needs the protected rows (the candidates)
// and a sample of the population, so only the owner runs it, offline;
// risk.Assess, which the online monitor runs, never does.
func Trace(ctx context.Context, truthPath string, rs []release.Release, reports []risk.Report, t TraceOptions) error {
	return TraceHistory(ctx, truthPath, risk.HistoryOf(rs, ""), reports, t)
}

// TraceHistory is Trace of the statements read into h.
func TraceHistory(ctx context.Context, truthPath string, h *risk.History, reports []risk.Report, t TraceOptions) error {
	t = t.withDefaults()
	var db *sql.DB
	defer func() {
		if db != nil {
			db.Close()
		}
	}()
	var pop *dataset.Population
	var popNote string
	for ri := range reports {
		r := &reports[ri]
		if !slices.ContainsFunc(r.Findings, risk.Finding.TracingFlag) {
			continue
		}
		var traced []risk.Finding
		for _, g := range h.Marginals(r.Analyst) {
			fi := g.FlagIn(r.Findings)
			if fi < 0 {
				continue
			}
			if db == nil {
				var err error
				if db, err = sql.Open("sqlite", "file:"+truthPath+"?mode=ro&_pragma=query_only(1)"); err != nil {
					return fmt.Errorf("opening the protected database to trace: %w", err)
				}
				pop, popNote = readPopulation(t.Population, truthPath)
			}
			note := popNote
			if pop != nil {
				found, n, err := traceGroup(ctx, db, g, pop, t)
				if err != nil {
					return err
				}
				note, traced = n, append(traced, found...)
			}
			r.Findings[fi].Note = note
		}
		for i := range traced {
			traced[i].Analyst, traced[i].Statements = r.Analyst, len(traced[i].Evidence)
		}
		r.Findings = append(r.Findings, traced...)
	}
	return nil
}

// readPopulation reads the population sample, or says why there is none.
func readPopulation(path, truthPath string) (*dataset.Population, string) {
	if path == "" {
		path = dataset.PopulationPath(truthPath)
		if _, err := os.Stat(path); err != nil {
			return nil, "no sample of the population beside the protected table (--population): its people were not tested"
		}
	}
	pop, err := dataset.ReadPopulation(path)
	if err != nil {
		return nil, "the population sample could not be read: its people were not tested"
	}
	return pop, ""
}

// traceGroup runs the test on one group of marginals: the released counts
// of the column's values 1..D (the population file's attributes; a value
// not released counts N/2, saying nothing), each person of the table as a
// candidate. It returns a finding per person traced and the flag's note.
func traceGroup(ctx context.Context, db *sql.DB, g risk.Marginals, pop *dataset.Population, t TraceOptions) ([]risk.Finding, string, error) {
	unit := t.Units[g.Table]
	if unit == "" && g.Table == dataset.GenomesTableName {
		unit = dataset.GenomesTable(pop.SNPs).PrivacyUnit
	}
	if unit == "" {
		return nil, "the privacy-unit column of " + g.Table + " is not known (--unit): its people were not tested", nil
	}
	if len(pop.References) < t.References+2 {
		return nil, fmt.Sprintf("the population sample has %d reference samples, fewer than %d: its people were not tested", len(pop.References), t.References+2), nil
	}
	people, rowsOf, genomes, err := candidates(ctx, db, g, unit, pop.SNPs)
	if err != nil {
		return nil, "", err
	}
	if len(people) == 0 {
		return nil, "the protected table's rows are not the population file's attributes 1..D: its people were not tested", nil
	}
	counts := make([]float64, pop.SNPs)
	for j := range counts {
		c, ok := g.Counts[strconv.Itoa(j+1)]
		if !ok {
			c = float64(len(people)) / 2
		}
		counts[j] = c
	}
	score, T := risk.TracingTest(pop.References, len(people), t.References, t.FPR, math.NaN(), counts)
	var out []risk.Finding
	for i, p := range people {
		s := score(genomes[i])
		if s < T {
			continue
		}
		// "The person has a row": at least one row of the unit.
		f := risk.Finding{Pattern: "tracing", Table: g.Table, Cell: []string{release.Compare(unit, release.OpEq, risk.ConstantOf(p)).Text},
			Value: 1, AtLeast: true, Individual: true, Evidence: g.Evidence, Note: fmt.Sprintf("tracing score %.3g >= T = %.3g", s, T)}
		rows := rowsOf[i]
		ok := rows >= 1
		f.Truth, f.Correct = &rows, &ok
		out = append(out, f)
	}
	fp := 0
	for _, z := range pop.NonMembers {
		if score(z) >= T {
			fp++
		}
	}
	rate := t.FPR
	if len(pop.NonMembers) > 0 {
		rate = max(rate, float64(fp)/float64(len(pop.NonMembers)))
	}
	note := fmt.Sprintf("%d of the table's %d people traced (T calibrated at a false-positive rate of %g on %d reference samples; %d of %d held-out non-members above T)",
		len(out), len(people), t.FPR, len(pop.References)-1-t.References, fp, len(pop.NonMembers))
	if !risk.BeyondChance(len(out), len(people), rate) {
		// Every candidate is in the table, so each one above T "holds";
		// what says the release traces anyone is that more are above T
		// than the false-positive rate puts there by chance.
		note = fmt.Sprintf("%d of the table's %d people above T, no more than a false-positive rate of %.2g puts there by chance: the release traces no one (%d of %d held-out non-members above T)",
			len(out), len(people), rate, fp, len(pop.NonMembers))
		out = nil
	}
	return out, note, nil
}

// candidates reads each person of the protected table, the person's rows
// in it (what scores a finding) and the person's genome over the group's
// column: 1 at value j when the person has a row with col = j under the
// group's base condition. The conditions are the answered statements' own,
// which the firewall validated before answering.
func candidates(ctx context.Context, db *sql.DB, g risk.Marginals, unit string, snps int) (people []string, rowsOf []float64, genomes []string, err error) {
	table, unitCol := pglex.QuoteIdent(g.Table), pglex.QuoteIdent(unit)
	rows, err := db.QueryContext(ctx, "SELECT "+unitCol+", COUNT(*) FROM "+table+" GROUP BY "+unitCol+" ORDER BY "+unitCol)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("reading the people of %s to trace: %w", g.Table, err)
	}
	index := map[string]int{}
	for rows.Next() {
		var p string
		var n float64
		if err := rows.Scan(&p, &n); err != nil {
			rows.Close()
			return nil, nil, nil, fmt.Errorf("reading the people of %s to trace: %w", g.Table, err)
		}
		index[p] = len(people)
		people, rowsOf = append(people, p), append(rowsOf, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, nil, err
	}
	bits := make([][]byte, len(people))
	for i := range bits {
		bits[i] = []byte(strings.Repeat("0", snps))
	}
	q := "SELECT " + unitCol + ", " + pglex.QuoteIdent(g.Column) + " FROM " + table
	if len(g.Base) > 0 {
		q += " WHERE " + strings.Join(conditionTexts(g.Base), " AND ")
	}
	rows, err = db.QueryContext(ctx, q)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("reading the rows of %s to trace: %w", g.Table, err)
	}
	defer rows.Close()
	for rows.Next() {
		var p string
		var v sql.NullInt64
		if err := rows.Scan(&p, &v); err != nil {
			return nil, nil, nil, errors.New("tracing: the column's values are not the attributes 1..D")
		}
		if !v.Valid || v.Int64 < 1 || v.Int64 > int64(snps) {
			return nil, nil, nil, nil
		}
		bits[index[p]][v.Int64-1] = '1'
	}
	genomes = make([]string, len(bits))
	for i, b := range bits {
		genomes[i] = string(b)
	}
	return people, rowsOf, genomes, rows.Err()
}

// conditionTexts are conditions as SQL.
func conditionTexts(cs []release.Conjunct) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Text
	}
	return out
}
