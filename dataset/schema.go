package dataset

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Column types, spelled as the config and the planner spell them.
const (
	TypeInteger = "integer"
	TypeReal    = "real"
	TypeText    = "text"
)

// Column describes one column of a table this package writes, with the
// public domain its values are drawn from when that domain is fixed by the
// generator and so may be published without looking at the data.
type Column struct {
	Name string
	Type string // TypeInteger, TypeReal or TypeText
	// Categories is the public domain of a text column, in output order;
	// nil when none is declared.
	Categories []string
	// Min and Max are the public integer range, inclusive, when HasRange.
	Min, Max int64
	HasRange bool
	// Doc says what the column means, for the config comment.
	Doc string
}

// HasDomain reports whether the column declares a public domain.
func (c Column) HasDomain() bool { return c.HasRange || c.Categories != nil }

// Table describes a table this package writes.
type Table struct {
	Name        string
	PrivacyUnit string // column identifying the contributor
	Columns     []Column
	// UnitKeyed says each row has a unit of its own (the config's
	// unit_keyed, which the firewall checks when it starts).
	UnitKeyed bool
	// MaxRowsPerUnit, when set, is the config's max_rows_per_unit, and
	// RowsPerUnit what it was read from (nil when not read from the data).
	MaxRowsPerUnit int64
	RowsPerUnit    *RowsPerUnit
}

// Column returns the named column (case-insensitively) and whether it exists.
func (t Table) Column(name string) (Column, bool) {
	for _, c := range t.Columns {
		if strings.EqualFold(c.Name, name) {
			return c, true
		}
	}
	return Column{}, false
}

// ColumnNames lists the column names in table order.
func (t Table) ColumnNames() []string {
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	return names
}

// ConfigSnippet renders the table as YAML for the countwall config's tables:
// section: its privacy unit, its columns and, where the table declares one,
// each column's public domain. A domain must come from public knowledge,
// never from the data, so columns without one get a comment telling the data
// owner to add it by hand.
func (t Table) ConfigSnippet() string {
	var b strings.Builder
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = yamlName(c.Name)
	}
	fmt.Fprintf(&b, "tables:\n  %s:\n    privacy_unit: %s\n", yamlName(t.Name), yamlName(t.PrivacyUnit))
	if t.UnitKeyed {
		b.WriteString("    # Each row is one person: checked when the firewall starts; lets the\n" +
			"    # in-memory path answer counts bounded per person.\n    unit_keyed: true\n")
	}
	b.WriteString(t.rowsBoundSnippet())
	fmt.Fprintf(&b, "    columns: [%s]\n", strings.Join(names, ", "))
	if note := t.QuotingNote(); note != "" {
		fmt.Fprintf(&b, "    # %s;\n    # here in the config they are named without the quotes.\n", capitalise(note))
	}
	var domains strings.Builder
	var missing []string
	for _, c := range t.Columns {
		switch {
		case c.HasRange:
			fmt.Fprintf(&domains, "      %s: {min: %d, max: %d}", yamlName(c.Name), c.Min, c.Max)
		case c.Categories != nil:
			fmt.Fprintf(&domains, "      %s: ", yamlName(c.Name))
			writeFlowList(&domains, c.Categories, "        ")
		default:
			if c.Name != t.PrivacyUnit {
				missing = append(missing, c.Name)
			}
			continue
		}
		if c.Doc != "" {
			fmt.Fprintf(&domains, "  # %s", c.Doc)
		}
		domains.WriteString("\n")
	}
	if domains.Len() > 0 {
		b.WriteString("    domains:\n")
		b.WriteString(domains.String())
	}
	if len(missing) > 0 {
		fmt.Fprintf(&b, "    # No domain for: %s. Add one (col: [categories] or col: {min: A, max: B})\n"+
			"    # only from public knowledge of what the values can be, never from the values in\n"+
			"    # the data, which would disclose which ones occur. GROUP BY under a differentially\n"+
			"    # private mechanism needs a declared domain.\n", strings.Join(missing, ", "))
	}
	return b.String()
}

// capitalise upper-cases the first letter of a sentence.
func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// yamlName writes a name as a YAML plain scalar when YAML reads it back as
// that string, and quoted when it would read as something else (true,
// null, ...). yaml.v3 follows YAML 1.2; the words YAML 1.1 readers take as
// booleans (yes, on, ...) are quoted for them as well.
func yamlName(name string) string {
	switch strings.ToLower(name) {
	case "yes", "no", "on", "off", "y", "n":
		return yamlScalar(name, yaml.DoubleQuotedStyle)
	}
	return yamlScalar(name, 0)
}

// yamlScalar encodes s as one YAML string scalar in style, through yaml.v3.
func yamlScalar(s string, style yaml.Style) string {
	b, err := yaml.Marshal(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: style})
	if err != nil {
		return strconv.Quote(s) // a valid YAML double-quoted string too
	}
	return strings.TrimSuffix(string(b), "\n")
}

// writeFlowList writes a YAML flow sequence of double-quoted strings, wrapped
// so that long category lists stay readable.
func writeFlowList(b *strings.Builder, items []string, indent string) {
	const width = 96
	b.WriteString("[")
	line := 0
	for i, item := range items {
		q := yamlScalar(item, yaml.DoubleQuotedStyle)
		if i > 0 {
			b.WriteString(",")
			if line+len(q)+2 > width {
				b.WriteString("\n" + indent)
				line = len(indent)
			} else {
				b.WriteString(" ")
				line++
			}
		}
		b.WriteString(q)
		line += len(q) + 1
	}
	b.WriteString("]")
}
