package starter

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"countwall/mechanisms"
)

// The budget a starter config writes: each analyst's total and the share
// a query spends unless she SETs another.
const (
	DefaultShare = 0.1
	DefaultCap   = 1.0
)

// budgetSection is the config's budget section, saying how its total is
// raised, since a raise in the file is not applied once an analyst has
// queried.
func budgetSection() string {
	return fmt.Sprintf(`budget:
  epsilon: {default: %s, min: 0.001, max: 1}
  delta: {default: 1.0e-6, min: 0, max: 1.0e-4}
  # Each analyst's total, for each accounting kind. Once serve has run it is held:
  # a reload or a restart may lower it, never raise it (serve logs a raise it does
  # not apply); 'countwall budget grant' adds to it.
  epsilon_cap: %s
  delta_cap: 1.0e-5
  # The idp and bdp attack runs of docs/attacks.md ask for SET epsilon = 1e-10 a query; they
  # need min: 1.0e-12 above, and reserve: 1000 here for their query rate.
`, figure(DefaultShare), figure(DefaultCap))
}

func figure(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// printAllowance tells the owner what the written budget allows under the
// mechanism in force, and how to allow more.
func printAllowance(w io.Writer, o Options) {
	m, err := mechanisms.New(o.Mechanism, nil, mechanisms.Env{})
	a, charges := m.(mechanisms.Accounter)
	if err != nil || !charges || a.Accounting() == mechanisms.AccountingNone {
		fmt.Fprintf(w, "  budget:  %s charges none; under laplace, gaussian, idp or bdp each analyst may spend epsilon %s in all, %s a query by default\n",
			o.Mechanism, figure(DefaultCap), figure(DefaultShare))
		return
	}
	kind := a.Accounting()
	answers := int(math.Floor(DefaultCap / DefaultShare * (1 + 1e-9)))
	count := fmt.Sprintf("%d answers", answers)
	if mechanisms.ChargesRho(m) {
		count = fmt.Sprintf("at least %d answers (zCDP composes them for less)", answers)
	}
	fmt.Fprintf(w, "  budget:  each analyst may spend %s epsilon %s in all (budget.epsilon_cap), %s a query by default: %s, more at a smaller SET epsilon\n",
		kind, figure(DefaultCap), figure(DefaultShare), count)
	fmt.Fprintf(w, "  more:    raise budget.epsilon_cap before the first start; once serve has run, a raise is held at the old cap\n"+
		"           (a reload or restart never raises a budget) and a grant adds to it:\n"+
		"           countwall budget grant %s --kind %s --epsilon %s --config %s\n", o.Analyst, kind, figure(DefaultCap), o.ConfigPath)
}
