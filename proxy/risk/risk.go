// Package risk is the risk solvers: the attacks countwall ships, run
// offline on what the audit says an analyst was answered, for `countwall
// audit risk`, serve's monitor, the demo and the attacks themselves (the
// mathematics they share: SolveSubsetSums, NoiseBound, TracingTest). The
// solvers take answers instead of asking: exact answers and threshold
// searches pin counts (differencing, the IDP and BDP searches), a search's
// halves add up, column after column, to the rows it rebuilt
// (reconstruction) or to one person's value (attribute inference),
// repeated answers under fresh noise and a condition's splits, however
// the condition is written, are averaged (averaging, split-averaging, the
// IDP variance test), sums over sets of a column's values are solved as a
// linear system (the noise remover's two-partitions, linear
// reconstruction), and a cell asked beside its parts bounds the noise
// (the perturbation finder).
//
// It is a library below the Engine: it imports the audit's release form
// and gonum, nothing of the firewall or the attack tools, and no database.
// It reads each release's structured record (release.Query: the table,
// the conditions as the planner validated them), never SQL text, and never
// the protected data, so what it finds depends only on what left the
// firewall; the owner's `audit risk` scores the findings against the
// protected table (attacks/audit).
package risk

import (
	"fmt"
	"iter"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"

	"countwall/proxy/state/release"
)

// Finding is one thing the released answers determine.
type Finding struct {
	Analyst string `json:"analyst"`
	// Pattern names the attack whose pattern the answers follow.
	Pattern string `json:"pattern"`
	// Table and Cell say what is determined: the count of the rows of
	// Table that satisfy every condition of Cell (ANDed), or a mechanism
	// parameter when Parameter is set.
	Table     string   `json:"table"`
	Cell      []string `json:"cell,omitempty"`
	Parameter string   `json:"parameter,omitempty"`
	// Sum, when set, is the column whose sum over the cell is determined
	// (Value), rather than its count.
	Sum string `json:"sum,omitempty"`
	// Value is the count determined, within ±Error (0: exactly).
	Value float64 `json:"value"`
	Error float64 `json:"error"`
	// Threshold is the b of the variance test's COUNT(*) > b.
	Threshold int64 `json:"threshold,omitempty"`
	// AtLeast marks a lower bound only (a noise bound D >= Value).
	AtLeast bool `json:"at_least,omitempty"`
	// Individual says the finding is about one person: the cell holds
	// exactly one row, or pins one unit's value.
	Individual bool `json:"individual"`
	// Evidence are the audit rows (ids) the finding rests on; Statements
	// how many there are when the list is long.
	Evidence   []int64 `json:"evidence"`
	Statements int     `json:"statements"`
	// Published are the rows of the published releases (Options.Published)
	// the finding also rests on, by their own audit's ids.
	Published []int64 `json:"published,omitempty"`
	// Truth is the cell's true count and Correct whether Value ± Error
	// holds it, when the protected table was given.
	Truth   *float64 `json:"truth,omitempty"`
	Correct *bool    `json:"correct,omitempty"`
	// Note says more of how the finding was drawn (the tracing test's
	// score and threshold), or why a flag went no further.
	Note string `json:"note,omitempty"`
	// conj are Cell's conditions while the solvers run (distinct reads
	// them as a box); a report leaves without them.
	conj []*release.Conjunct
}

// finding is a finding of a cell: conj are its conditions, Cell their
// texts.
func finding(pattern, table string, conj []*release.Conjunct, value float64, evidence []int64) Finding {
	return Finding{Pattern: pattern, Table: table, Cell: texts(conj), conj: conj, Value: value, Evidence: evidence}
}

// TracingFlag says whether f is the flag of released marginals that the
// owner's tracing test takes up (Marginals.FlagIn).
func (f Finding) TracingFlag() bool { return f.Pattern == "tracing" && !f.Individual }

// Exact reports whether the finding determines its count exactly.
func (f Finding) Exact() bool { return f.Error < 0.5 && !f.AtLeast && f.Parameter == "" }

// What is the finding as one line, its note after it.
func (f Finding) What() string {
	if f.Note != "" {
		g := f
		g.Note = ""
		return g.What() + "; " + f.Note
	}
	if f.Parameter != "" && f.AtLeast {
		return fmt.Sprintf("%s >= %g", f.Parameter, f.Value)
	}
	if f.Parameter != "" {
		where := ""
		if f.Table != "" {
			where = " of " + cellText(f.Table, f.Cell)
		}
		return fmt.Sprintf("%s%s = %g", f.Parameter, where, f.Value)
	}
	v := fmt.Sprintf("%g", f.Value)
	if f.Sum != "" {
		return "sum(" + f.Sum + ") of " + cellText(f.Table, f.Cell) + " = " + v
	}
	if f.AtLeast {
		return "count of " + cellText(f.Table, f.Cell) + " >= " + v
	}
	if f.Error >= 0.5 {
		v = fmt.Sprintf("%.1f ± %.1f", f.Value, f.Error)
	}
	return "count of " + cellText(f.Table, f.Cell) + " = " + v
}

// Report is what the answers released to one analyst determine.
type Report struct {
	Analyst  string    `json:"analyst"`
	Answered int       `json:"answered"` // answered statements read
	Findings []Finding `json:"findings"`
	// Skipped names the solvers not run on these answers, and why.
	Skipped string `json:"skipped,omitempty"`
	// Unread is how many of the answered statements came without their
	// structured record and were not assessed.
	Unread int `json:"unread,omitempty"`
}

// Individuals counts the findings about one person.
func (r Report) Individuals() int {
	n := 0
	for _, f := range r.Findings {
		if f.Individual {
			n++
		}
	}
	return n
}

// Options tune the solvers.
type Options struct {
	// Analyst, when set, assesses only this analyst.
	Analyst string
	// MinRepeats is how many answers to one statement (or splits of one
	// condition) are averaged before a finding is drawn; 0 means 10.
	MinRepeats int
	// MaxError is the widest error (two standard errors) of an averaged or
	// solved count still reported; 0 means 1.
	MaxError float64
	// MaxCell is the largest count of a pinned cell that is reported
	// (small cells are what disclosure control protects); 0 means 10.
	MaxCell float64
	// IDPK is the idp mechanism's group size k; 0 means 1 (its default).
	IDPK int
	// IDPPlusOne says the idp mechanism adds one to the sensitivity (its
	// plus_one parameter), which the variance test must know.
	IDPPlusOne bool
	// Published are releases made public before (another firewall's
	// answers, read from its audit): every analyst is taken to know them,
	// and the solvers combine them with her own (sources.go).
	Published []release.Release
	// MaxRowsAnswers is the most answers of one analyst the rows solver
	// takes: it holds about 0.8 KB an answer of a long threshold search,
	// and beyond this the analyst is assessed without it (Report.Skipped
	// says so) rather than running out of memory. 0 means
	// DefaultMaxRowsAnswers.
	MaxRowsAnswers int
	// RowsGCPercent, when set, is the garbage collector's GOGC while the
	// rows solver runs: its heap holds few pointers, so a collection costs
	// little and may come often (the process's setting is put back after).
	RowsGCPercent int
	// Domains are the columns' declared domains, by table and column:
	// their ends are read as closed (domains.go).
	Domains map[string]map[string]Domain
}

// DefaultMaxRowsAnswers is Options.MaxRowsAnswers when it is 0: about
// 1.7 GB for the rows solver at the most.
const DefaultMaxRowsAnswers = 2000000

func (o Options) withDefaults() Options {
	if o.MaxRowsAnswers <= 0 {
		o.MaxRowsAnswers = DefaultMaxRowsAnswers
	}
	if o.MinRepeats <= 0 {
		o.MinRepeats = 10
	}
	if o.MaxError <= 0 {
		o.MaxError = 1
	}
	if o.MaxCell <= 0 {
		o.MaxCell = 10
	}
	if o.IDPK <= 0 {
		o.IDPK = 1
	}
	return o
}

// Assess runs every solver on each analyst's answered statements and
// returns the analysts with findings, by name; an analyst whose answers
// determine nothing is left out.
func Assess(rs []release.Release, o Options) []Report {
	return AssessHistory(HistoryOf(rs, o.Analyst), o)
}

// AssessHistory is Assess of the statements read into h. It lets go of
// each analyst's answers once assessed, but for an analyst whose noisy
// marginals are flagged for the tracing test (History.Marginals): one
// analyst's answers are held at a time beside the others' still to come.
func AssessHistory(h *History, o Options) []Report {
	o = o.withDefaults()
	pub := publishedAnswers(o.Published)
	var out []Report
	for name, mine := range h.of {
		if o.Analyst != "" && name != o.Analyst {
			continue
		}
		rep := Report{Analyst: name, Answered: mine.answered, Unread: mine.unread}
		withRows := len(mine.answers)+len(pub) <= o.MaxRowsAnswers
		// The rows solver runs first, its working set let go before the
		// others' findings are made; its findings still come after theirs.
		as, sp, rowsFound := rowsFirst(mine, pub, withRows, o)
		for _, solve := range solvers {
			rep.Findings = append(rep.Findings, solve(as, sp, o)...)
		}
		if withRows {
			rep.Findings = append(rep.Findings, rowsFound...)
			rep.Findings = distinct(rep.Findings, sp())
		} else {
			rep.Skipped = fmt.Sprintf("row reconstruction not run: %d answers, more than %d (assess windows of them with --since, or raise --rows-limit)", len(as), o.MaxRowsAnswers)
		}
		rep.Findings = append(rep.Findings, sumFindings(mine.sums, mine.answers)...)
		rep.Findings = ownFindings(rep.Findings)
		if !slices.ContainsFunc(rep.Findings, Finding.TracingFlag) {
			mine.answers = nil // assessed: held on only for the tracing test (History.Marginals)
		}
		if len(rep.Findings) == 0 && rep.Skipped == "" {
			continue
		}
		for i := range rep.Findings {
			rep.Findings[i].Analyst = name
			rep.Findings[i].Statements = len(rep.Findings[i].Evidence)
			rep.Findings[i].conj = nil
		}
		sort.SliceStable(rep.Findings, func(i, j int) bool { return rep.Findings[i].Pattern < rep.Findings[j].Pattern })
		out = append(out, rep)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Analyst < out[j].Analyst })
	return out
}

// solvers are run in this order on each analyst's answers.
var solvers = []func([]answer, func() *space, Options) []Finding{
	withoutSpace(pinned), withoutSpace(averaged), splits, withoutSpace(linear), withoutSpace(marginals),
}

// withoutSpace adapts a solver that reads no cells as value sets.
func withoutSpace(solve func([]answer, Options) []Finding) func([]answer, func() *space, Options) []Finding {
	return func(as []answer, _ func() *space, o Options) []Finding { return solve(as, o) }
}

// rowsFirst runs the rows solver (when withRows) on mine's answers and
// then pub's, and returns those answers, the space of their cells and the
// rows solver's findings. The answers are packed while it runs: they were
// read one at a time and grew by doubling, and come back copied to their
// size, the slack not held through the solvers.
func rowsFirst(mine *analystHistory, pub []answer, withRows bool, o Options) ([]answer, func() *space, []Finding) {
	n := len(mine.answers)
	if withRows {
		if p, packed := pack(mine.answers, pub); packed {
			mine.answers = nil
			cells := newDomainSpaceOf(p.all(), o)
			sp := func() *space { return cells }
			found := rowsTuned(p.all(), sp, o)
			as := p.unpack()
			mine.answers = as[:n:n]
			return as, sp, found
		}
	}
	as := append(append(make([]answer, 0, n+len(pub)), mine.answers...), pub...)
	mine.answers = as[:n:n]
	sp := spaceOnce(as, o)
	if !withRows {
		return as, sp, nil
	}
	return as, sp, rows(slices.Values(as), sp, o)
}

// rowsTuned is rows at o.RowsGCPercent, when set. Its working set, let go,
// is collected as it returns: the collector would otherwise wait for the
// heap to grow past the rows solver's peak again, and the other solvers'
// memory would stand beside the dead boxes.
func rowsTuned(each iter.Seq[answer], sp func() *space, o Options) []Finding {
	if o.RowsGCPercent <= 0 {
		return rows(each, sp, o)
	}
	old := debug.SetGCPercent(o.RowsGCPercent)
	defer debug.SetGCPercent(old)
	found := rows(each, sp, o)
	runtime.GC()
	return found
}

// spaceOnce is the answers' cells read as value sets (newSpace), made at
// the first call and shared by the solvers that read it.
func spaceOnce(as []answer, o Options) func() *space {
	var sp *space
	return func() *space {
		if sp == nil {
			sp = newDomainSpace(as, o)
		}
		return sp
	}
}

// The rows solver (rows.go) runs after them, when the answers are few
// enough (Options.MaxRowsAnswers).
