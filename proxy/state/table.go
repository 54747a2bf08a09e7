package state

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"
)

// WriteTable writes one line per analyst and kind: spent, cap (grants
// included), remaining and granted, for epsilon and delta. A cap that is not
// known (no config given) shows as "-".
func WriteTable(w io.Writer, balances []Balance) {
	if len(balances) == 0 {
		fmt.Fprintln(w, "no budget spent or granted yet")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ANALYST\tKIND\tEPSILON SPENT\tEPSILON CAP\tEPSILON REMAINING\tEPSILON GRANTED\tDELTA SPENT\tDELTA CAP\tDELTA REMAINING\tDELTA GRANTED\tRHO SPENT")
	for _, b := range balances {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", b.Analyst, b.Kind,
			figure(b.EpsilonSpent), figure(b.EpsilonCap), figure(b.EpsilonRemaining()), figure(b.EpsilonGranted),
			figure(b.DeltaSpent), figure(b.DeltaCap), figure(b.DeltaRemaining()), figure(b.DeltaGranted), figure(b.RhoSpent))
	}
	tw.Flush()
	for _, b := range balances {
		if b.RhoSpent > 0 && b.RhoDelta == 0 {
			fmt.Fprintln(w, "RHO SPENT is zCDP spending (gaussian), not included in EPSILON SPENT: at the analyst's delta cap d it costs epsilon rho + 2*sqrt(rho*ln(1/d)) (SHOW budget shows it converted)")
			break
		}
	}
}

// figure is a table cell: the amount as FormatFigure writes it, "-" when
// unknown.
func figure(f float64) string {
	if math.IsNaN(f) {
		return "-"
	}
	return FormatFigure(f)
}
