package bounding

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable prints what ErrorVsG measured with options o: one line per G
// with the noise scale, the bias, and the mean absolute and relative error.
func WriteTable(w io.Writer, o Options, rows []Row) error {
	fmt.Fprintf(w, "laplace on a %d x %d long table, epsilon %g per query, %d runs\n\n", o.People, o.Attributes, o.Epsilon, o.Runs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "G\tnoise scale\tbias per cell\tmean abs error\trelative error\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%.1f\t%.1f\t%.1f\t%.1f%%\t\n", r.G, r.NoiseScale, r.Bias, r.MeanAbsError, 100*r.RelativeError)
	}
	return tw.Flush()
}
