package starter

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"countwall/dataset"
)

// Options describe the config to write.
type Options struct {
	// ConfigPath is where the config goes; Database and State are written
	// relative to its directory, as the config reads them.
	ConfigPath string
	Database   string
	State      string // "" is NAME-state.db beside the config
	Table      dataset.Table
	// Observed are the columns whose domains were read from the data.
	Observed []string
	// Analyst is the one analyst's name and Verifier its SCRAM verifier.
	Analyst, Verifier string
	Mechanism         string // the mechanism in force
	Listen            string // server.listen
}

// Mechanisms are the parameters written for every mechanism, so that
// --mechanism.name switches with its parameters in place (docs/mechanisms.md);
// each is the mechanism's default.
var Mechanisms = []struct{ Name, Params string }{
	{"suppress", "{threshold: 10, mode: zero}"},
	{"bounded", "{range: 2}"},
	{"cellkey", "{ptable: uniform, D: 2, suppress_at: 4}"},
	{"layered", "{noise_layer_sd: 1}"},
	{"idp", "{k: 1, plus_one: false}"},
}

// NewPassword is a random password of 128 bits, for the analyst the config
// names: shown once, never stored.
func NewPassword() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// relativeTo writes path as the config at configPath reads it: relative to
// the config's directory when both are on the same tree, else absolute.
func relativeTo(configPath, path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	dir, err := filepath.Abs(filepath.Dir(configPath))
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(dir, abs); err == nil && !strings.HasPrefix(rel, "..") {
		return rel, nil
	}
	return abs, nil
}

// Write writes the config to w.
func Write(w io.Writer, o Options) error {
	db, err := relativeTo(o.ConfigPath, o.Database)
	if err != nil {
		return err
	}
	state := o.State
	if state == "" {
		state = filepath.Join(filepath.Dir(o.ConfigPath), o.Table.Name+"-state.db")
	}
	if state, err = relativeTo(o.ConfigPath, state); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, `# countwall config for table %s of %s.
#   countwall serve --config %s
#   psql "postgres://%s@%s/countwall"
# Relative paths are resolved against this file's directory.
database: %s
# countwall's own state (firewall secret, audit log, budget ledger); made on first start.
state: %s

# The mechanism in force; switch with --mechanism.name NAME or COUNTWALL_MECHANISM_NAME.
mechanism:
  name: %s

# Every mechanism's parameters, so that switching keeps them (docs/mechanisms.md).
mechanisms:
`, o.Table.Name, filepath.Base(o.Database), filepath.Base(o.ConfigPath), o.Analyst, o.Listen, yamlScalar(db), yamlScalar(state), o.Mechanism)
	for _, m := range Mechanisms {
		fmt.Fprintf(&b, "  %s: %s\n", m.Name, m.Params)
	}
	b.WriteString("\n" + budgetSection())
	fmt.Fprintf(&b, `
analysts:
  # %s's password was printed once when this file was written; only its SCRAM
  # verifier is kept. 'countwall passwd' makes a verifier for a new password.
  %s:
    password: %s

server:
  listen: %s

`, o.Analyst, yamlKey(o.Analyst), strconv.Quote(o.Verifier), o.Listen)
	b.WriteString(tablesSection(o.Table, o.Observed))
	_, err = io.WriteString(w, b.String())
	return err
}

// reviewBlock heads a table's domains when some were read from the data.
const reviewBlock = `      # REVIEW before analysts connect: the domains marked "read from the data" were
      # read from the values in the table, not declared from public knowledge. A domain
      # read from the data is not public: its ends and its categories say which values
      # occur (the largest balance, a rare category), and every GROUP BY answer lists
      # them. Keep one only where the same list or range is public (a form's choices,
      # a code list, a legal range); widen it to that, or delete it.
`

// tablesSection is the table's tables: section, with the review block above
// the domains read from the data.
func tablesSection(t dataset.Table, observed []string) string {
	snippet := t.ConfigSnippet()
	if len(observed) > 0 {
		snippet = strings.Replace(snippet, "    domains:\n", "    domains:\n"+reviewBlock, 1)
	}
	return snippet
}

// yamlScalar quotes s for YAML when it is not a plain path.
func yamlScalar(s string) string {
	for _, r := range s {
		if !(r == '/' || r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return strconv.Quote(s)
		}
	}
	return s
}

// yamlKey quotes a key YAML would read as something else.
func yamlKey(s string) string {
	switch strings.ToLower(s) {
	case "y", "yes", "n", "no", "true", "false", "on", "off", "null", "~":
		return strconv.Quote(s)
	}
	return yamlScalar(s)
}

// Made is what Create did: the analyst's password, to be shown once, the
// columns whose domains were read from the data, and the rows per unit
// max_rows_per_unit was read from (nil when each row is a unit).
type Made struct {
	Password    string
	Observed    []string
	RowsPerUnit *dataset.RowsPerUnit
}

// Create writes the config o describes for table t of the database at
// o.Database: it reads the domains from the data, makes the analyst's
// password and its verifier (with verifier), writes the file and checks it
// with check (the config loader), removing it when it does not load.
func Create(ctx context.Context, o Options, t dataset.Table, replace bool, verifier func(password string) (string, error), check func(path string) error) (Made, error) {
	t, observed, err := ObserveDomains(ctx, o.Database, t)
	if err != nil {
		return Made{}, err
	}
	if t.MaxRowsPerUnit == 0 { // load has read it already
		if t, err = dataset.ObserveRowsPerUnit(ctx, o.Database, t); err != nil {
			return Made{}, err
		}
	}
	password, err := NewPassword()
	if err != nil {
		return Made{}, err
	}
	if o.Verifier, err = verifier(password); err != nil {
		return Made{}, err
	}
	o.Table, o.Observed = t, observed
	if err := WriteFile(o, replace); err != nil {
		return Made{}, err
	}
	if err := check(o.ConfigPath); err != nil {
		os.Remove(o.ConfigPath)
		return Made{}, fmt.Errorf("the config written would not load, so it was removed: %w", err)
	}
	return Made{Password: password, Observed: observed, RowsPerUnit: t.RowsPerUnit}, nil
}

// WriteFile writes the config to o.ConfigPath, readable by its owner only
// (it holds a verifier), refusing to replace an existing file unless
// replace.
func WriteFile(o Options, replace bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if replace {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(o.ConfigPath, flags, 0o600)
	if os.IsExist(err) {
		return fmt.Errorf("%s exists; choose another file or give --replace-config", o.ConfigPath)
	}
	if err != nil {
		return err
	}
	if err := Write(f, o); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Print tells the owner what was written: the analyst's password, once
// (the file keeps only its verifier), the domains to review before
// analysts connect, and how to start and connect.
func (m Made) Print(w io.Writer, o Options) {
	fmt.Fprintf(w, "wrote %s: table %s, analyst %s, mechanism %s\n", o.ConfigPath, o.Table.Name, o.Analyst, o.Mechanism)
	fmt.Fprintf(w, "  password of %s: %s\n  (shown once: the file keeps only its SCRAM verifier)\n", o.Analyst, m.Password)
	if len(m.Observed) > 0 {
		fmt.Fprintf(w, "  REVIEW the domains read from the data before analysts connect: %s\n", strings.Join(m.Observed, ", "))
	}
	if r := m.RowsPerUnit; r != nil {
		fmt.Fprintf(w, "  REVIEW max_rows_per_unit %d, read from the data: %s;\n"+
			"         laplace and gaussian count at most that many rows of a unit per cell (with 1, the default,\n"+
			"         COUNT(*) counts units, not rows)\n", r.Bound, r.Summary())
	}
	if note := o.Table.QuotingNote(); note != "" {
		fmt.Fprintf(w, "  %s\n", note)
	}
	printAllowance(w, o)
	fmt.Fprintf(w, "  start:   countwall serve --config %s\n  connect: psql \"postgres://%s@%s/countwall\"\n", o.ConfigPath, o.Analyst, o.Listen)
}
