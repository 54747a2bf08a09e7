package dataset

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
)

// Report tells the data owner what a load did: the row count and where
// the table went on out, then the config entry to add; warnings and notes
// (names lowered, reserved words) go to warn.
func (r *LoadResult) Report(out, warn io.Writer, dbPath string, elapsed time.Duration) {
	r.Summary(out, warn, dbPath, elapsed)
	fmt.Fprintf(out, "\n# Config entry for %s (add it under the countwall config):\n", r.Table.Name)
	fmt.Fprint(out, r.Table.ConfigSnippet())
}

// Summary is Report without the config entry, for a load that writes a
// whole config instead.
func (r *LoadResult) Summary(out, warn io.Writer, dbPath string, elapsed time.Duration) {
	what := "existing database"
	if r.CreatedFile {
		what = "new database"
	}
	for _, w := range r.Warnings {
		fmt.Fprintln(warn, "warning: "+w)
	}
	fmt.Fprintf(out, "loaded %s rows into table %s of %s %s in %s\n",
		humanize.Comma(r.Rows), r.Table.Name, what, dbPath, elapsed.Round(time.Millisecond))
	if len(r.Lowered) > 0 {
		fmt.Fprintf(warn, "note: stored in lower case, as SQL reads unquoted names: %s\n", strings.Join(r.Lowered, ", "))
	}
	if reserved := r.Table.ReservedColumns(); len(reserved) > 0 {
		fmt.Fprintf(warn, "warning: reserved words in SQL, to be written in double quotes in queries (WHERE \"%s\" = ...): %s\n",
			reserved[0], strings.Join(reserved, ", "))
	}
}

// ParseDelimiter reads a field separator as a user writes it: one
// character, or "tab".
func ParseDelimiter(s string) (rune, error) {
	if s == "tab" || s == `\t` {
		return '\t', nil
	}
	r := []rune(s)
	if len(r) != 1 || r[0] == '"' || r[0] == '\n' || r[0] == '\r' {
		return 0, fmt.Errorf(`--delimiter must be one character such as ";" or "tab", not %q`, s)
	}
	return r[0], nil
}
