package attacks

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
)

// ReconstructParams are idp-reconstruct's own parameters (Options.Params).
type ReconstructParams struct {
	// Resume is a result an earlier run wrote with --json, interrupted or
	// stopped part way: the columns it completed are taken as it found them
	// and not asked again.
	Resume string
	// Search is how a split cuts a range of values: SearchWeighted (the
	// default, "") or SearchHalving (the paper's).
	Search string
}

// resumePoint is where a run picks up an earlier one: the columns it
// completed, its groups over them, the target's size, and what it had
// learnt of the firewall.
type resumePoint struct {
	path      string
	cols      int
	groups    []recGroup
	n0        int64
	tableSize int64
	k         int64
	queries   int // every earlier run's queries
	outside   []OutsideDomain
	// partial are the splits, by the column after the cols completed, of
	// the first partialDone groups: what the earlier run did of the column
	// it was cut short in.
	partial     []recGroup
	partialDone int
}

// partialColumn is a column a stop cut short: the splits of its first
// done groups, in order.
type partialColumn struct {
	column int
	done   int
	groups []recGroup
}

// savedPartial is a partialColumn as a result holds it.
type savedPartial struct {
	Column     string         `json:"column"`
	GroupsDone int            `json:"groups_done"`
	Rows       []RecoveredRow `json:"rows"`
}

// savedReconstruction is the part of a written result that a resume reads.
type savedReconstruction struct {
	Attack  string `json:"attack"`
	Target  string `json:"target"`
	Details struct {
		Columns        []string        `json:"columns"`
		Rows           []RecoveredRow  `json:"rows"`
		TargetRows     *int64          `json:"target_rows"`
		TableSize      int64           `json:"table_size"`
		K              int64           `json:"k"`
		Queries        int             `json:"queries"`
		EarlierQueries int             `json:"earlier_queries"`
		Outside        []OutsideDomain `json:"outside_domain"`
		Partial        *savedPartial   `json:"partial_column"`
	} `json:"details"`
}

// readResume reads the result at path and checks that it is a run of the
// same reconstruction: the same target, its columns the first of o's
// domains in order, its values in them.
func readResume(path string, o Options) (*resumePoint, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--resume: %w", err)
	}
	var saved savedReconstruction
	if err := json.Unmarshal(b, &saved); err != nil || saved.Attack != "idp-reconstruct" {
		return nil, fmt.Errorf("--resume %s: not a result of idp-reconstruct written with --json", path)
	}
	d := saved.Details
	if saved.Target != o.Target.querySQL() {
		return nil, fmt.Errorf("--resume %s: that run's target was %q, this one's is %q; give the same --table and --where", path, saved.Target, o.Target.querySQL())
	}
	if d.TargetRows == nil {
		return nil, fmt.Errorf("--resume %s: that run stopped before it knew the target's size, so there is nothing to resume; run again without --resume", path)
	}
	if len(d.Columns) > len(o.Domains) {
		return nil, fmt.Errorf("--resume %s: that run completed %d columns, more than the %d given with --domain", path, len(d.Columns), len(o.Domains))
	}
	for i, c := range d.Columns {
		if o.Domains[i].Column != c {
			return nil, fmt.Errorf("--resume %s: its column %d is %q where --domain gives %q; give the domains in the same order", path, i+1, c, o.Domains[i].Column)
		}
	}
	p := &resumePoint{path: path, cols: len(d.Columns), n0: *d.TargetRows, tableSize: d.TableSize, k: d.K,
		queries: d.Queries + d.EarlierQueries, outside: d.Outside}
	p.groups = []recGroup{{count: p.n0}}
	if p.cols > 0 {
		if p.groups, err = groupsOf(d.Rows, o.Domains, p.cols); err != nil {
			return nil, fmt.Errorf("--resume %s: %w", path, err)
		}
	}
	if part := d.Partial; part != nil && p.cols < len(o.Domains) {
		if part.Column != o.Domains[p.cols].Column || part.GroupsDone > len(p.groups) {
			return nil, fmt.Errorf("--resume %s: its column cut short, %q after %d groups, does not follow its %d columns", path, part.Column, part.GroupsDone, p.cols)
		}
		if p.partial, err = groupsOf(part.Rows, o.Domains, p.cols+1); err != nil {
			return nil, fmt.Errorf("--resume %s: %w", path, err)
		}
		p.partialDone = part.GroupsDone
	}
	return p, nil
}

// groupsOf reads saved rows over the first cols of domains back as groups.
func groupsOf(rows []RecoveredRow, domains []Domain, cols int) ([]recGroup, error) {
	var out []recGroup
	for _, row := range rows {
		g := recGroup{count: row.Count}
		if len(row.Values) != cols {
			return nil, fmt.Errorf("a row has %d values for %d columns", len(row.Values), cols)
		}
		for i, v := range row.Values {
			idx, err := domainIndex(domains[i], v)
			if err != nil {
				return nil, err
			}
			g.vals = append(g.vals, idx)
		}
		out = append(out, g)
	}
	return out, nil
}

// domainIndex is the index in d of v, a value as reconValue writes it.
func domainIndex(d Domain, v string) (int64, error) {
	if d.Categories != nil {
		if i := slices.Index(d.Categories, v); i >= 0 {
			return int64(i), nil
		}
		return 0, fmt.Errorf("a value of column %q is not in its --domain", d.Column)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < d.Lo || n > d.Hi {
		return 0, fmt.Errorf("a value of column %q is not in its --domain %d..%d", d.Column, d.Lo, d.Hi)
	}
	return n - d.Lo, nil
}

// resumeFrom is the resume point o's parameters ask for, nil for a fresh
// run.
func resumeFrom(o Options) (*resumePoint, error) {
	p, _ := o.Params.(*ReconstructParams)
	if p == nil || p.Resume == "" {
		return nil, nil
	}
	return readResume(p.Resume, o)
}

// checkModel refuses a resume whose earlier run assumed another k:
// its counts would not be this run's.
func (p *resumePoint) checkModel(k int64) error {
	if p != nil && p.k != k {
		return errors.New("--resume: the earlier run assumed k = " + strconv.FormatInt(p.k, 10) +
			", this one k = " + strconv.FormatInt(k, 10) + "; give the same --group-k")
	}
	return nil
}
