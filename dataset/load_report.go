package dataset

import (
	"context"
	"countwall/dataset/progress"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/pflag"
)

// Report tells the data owner what a load did: the row count and where
// the table went on out, then the config entry to add; warnings and notes
// (names lowered, reserved words) go to warn.
func (r *LoadResult) Report(out, warn io.Writer, dbPath string, elapsed time.Duration) {
	r.Summary(out, warn, dbPath, elapsed)
	if note := r.Table.QuotingNote(); note != "" {
		fmt.Fprintln(warn, "note: "+note)
	}
	fmt.Fprintf(out, "\n# Config entry for %s (add it under the countwall config):\n", r.Table.Name)
	fmt.Fprint(out, r.Table.ConfigSnippet())
}

// Summary is Report without the config entry and the note on names to
// quote, for a load that writes a whole config instead (which says both).
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
		fmt.Fprintf(warn, "note: stored in lower case, as SQL reads unquoted names and the config its keys: %s\n", strings.Join(r.Lowered, ", "))
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

// LoadCommand is `countwall load`: the options, the delimiter as the user
// writes it, and whether a whole config is written after (the config entry
// is then not printed).
type LoadCommand struct {
	LoadOptions
	Delimiter    string
	WritesConfig bool
}

// AddFlags defines the load flags on f (the config's own are the
// starter's).
func (c *LoadCommand) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&c.CSVPath, "csv", "", "CSV file to import (first row: column names)")
	f.StringVar(&c.DBPath, "db", "", "SQLite file to create or add the table to")
	f.StringVar(&c.Table, "table", "", "name of the table to create")
	f.StringVar(&c.Unit, "unit", "", "privacy-unit column: identifies the contributor of each row")
	f.StringVar(&c.AddID, "add-id", "", "add a column of this name numbering the rows, as the privacy unit (each row one person)")
	f.StringVar(&c.Delimiter, "delimiter", "", `field separator: ",", ";", "tab" or "|" (default: detected)`)
	f.BoolVar(&c.Replace, "replace", false, "replace the table if the database already has it")
}

// Run loads the CSV with a progress bar on log, says on out what it loaded
// (with the config entry unless WritesConfig), and words its errors for the
// command line.
func (c *LoadCommand) Run(ctx context.Context, out, log io.Writer) (LoadResult, error) {
	o := c.LoadOptions
	if c.Delimiter != "" {
		d, err := ParseDelimiter(c.Delimiter)
		if err != nil {
			return LoadResult{}, err
		}
		o.Delimiter = d
	}
	update, done := progress.Bar(log, "loading "+o.Table)
	o.Progress = update
	start := time.Now()
	res, err := LoadCSV(ctx, o)
	done()
	if err == nil {
		res.Table, err = ObserveRowsPerUnit(ctx, o.DBPath, res.Table)
	}
	switch {
	case errors.Is(err, ErrTableExists):
		return res, fmt.Errorf("load: %w; use --replace to replace it, or choose another --table", err)
	case errors.Is(err, context.Canceled):
		return res, errors.New("load: interrupted; nothing was written")
	case err != nil:
		return res, fmt.Errorf("load: %w", err)
	}
	if c.WritesConfig {
		res.Summary(out, log, o.DBPath, time.Since(start))
	} else {
		res.Report(out, log, o.DBPath, time.Since(start))
	}
	return res, nil
}
