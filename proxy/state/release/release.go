// Package release is what the audit log keeps of an answered statement, in
// the form `countwall audit export` writes and `countwall audit risk` reads:
// who asked, when, the statement (its shape and its constants) and the cells
// that left the firewall. It is a leaf, so that the risk solvers read the
// audit without importing the state database, the planner or the
// mechanisms.
package release

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Release is one audited statement. Answered queries carry Shape,
// Constants and Cells; refusals carry SQLState and Reason.
type Release struct {
	ID          int64     `json:"id"`
	At          time.Time `json:"at"`
	Analyst     string    `json:"analyst"`
	Kind        Kind      `json:"kind"`
	Mechanism   string    `json:"mechanism"`
	Outcome     Outcome   `json:"outcome"`
	SQLState    string    `json:"sqlstate,omitempty"`
	Reason      string    `json:"reason,omitempty"`
	Fingerprint string    `json:"fingerprint"` // "" where Shape records the statement
	ChargeKind  string    `json:"charge_kind,omitempty"`
	Epsilon     float64   `json:"epsilon,omitempty"`
	Delta       float64   `json:"delta,omitempty"`
	Rho         float64   `json:"rho,omitempty"` // a zCDP charge (gaussian)
	// Shape is the statement with each constant replaced by $1, $2, ...;
	// Constants fill them in order.
	Shape     string     `json:"shape,omitempty"`
	Constants []Constant `json:"constants,omitempty"`
	// Query is the statement as the planner read it; nil for a refusal
	// and for rows written before the audit kept it.
	Query *Query `json:"query,omitempty"`
	Cells []Cell `json:"cells,omitempty"`
}

// Kind is what a statement is, as the audit, the logs and the metrics
// name it.
type Kind string

// The kinds of statement.
const (
	KindQuery   Kind = "query"   // a COUNT query
	KindExplain Kind = "explain" // EXPLAIN of one
	KindCatalog Kind = "catalog" // schema discovery, answered from the config's metadata
	KindSet     Kind = "set"
	KindShow    Kind = "show"
	KindChatter Kind = "chatter" // what drivers send on connect, transaction control
	KindInvalid Kind = "invalid" // refused before it could be read as any of the above
)

// String is the kind as the audit writes it.
func (k Kind) String() string { return string(k) }

// Outcome is whether a statement was answered.
type Outcome string

// The outcomes of a statement.
const (
	OutcomeAnswered Outcome = "answered"
	OutcomeRefused  Outcome = "refused"
)

// String is the outcome as the audit writes it.
func (o Outcome) String() string { return string(o) }

// Constant is one literal of a statement: a number (its text as written)
// or a string.
type Constant struct {
	Text   string `json:"text"`
	String bool   `json:"string,omitempty"`
}

// SQL renders the literal as it is spelt in a statement.
func (c Constant) SQL() string {
	if c.String {
		return "'" + strings.ReplaceAll(c.Text, "'", "''") + "'"
	}
	return c.Text
}

// Datum is a group value of a released row.
type Datum struct {
	Null bool   `json:"null,omitempty"`
	Text string `json:"text,omitempty"`
}

// Cell is one released row: its group values (GROUP BY) and the value sent.
type Cell struct {
	Group      []Datum `json:"group,omitempty"`
	Value      float64 `json:"value"`
	IsFloat    bool    `json:"float,omitempty"`
	Suppressed bool    `json:"suppressed,omitempty"`
	// Aggregates are, for a query with SUM or AVG, every aggregate's value
	// in select-list order, as its text was sent (Null for NULL); Value is
	// then its COUNT, 0 when it selects none.
	Aggregates []Datum `json:"aggregates,omitempty"`
}

// Statement is the statement's text: the shape with its constants put back.
// A placeholder stands alone: a $ inside a double-quoted name ("a$1") or
// within an unquoted one (b$2) is part of the name.
func (r Release) Statement() string {
	if r.Shape == "" {
		return ""
	}
	var b strings.Builder
	s := r.Shape
	quoted := false
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			quoted = !quoted // a doubled "" inside a name toggles twice
		}
		if s[i] != '$' || quoted || (i > 0 && nameByte(s[i-1])) {
			b.WriteByte(s[i])
			continue
		}
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		n, err := strconv.Atoi(s[i+1 : j])
		if err != nil || n < 1 || n > len(r.Constants) {
			b.WriteByte(s[i])
			continue
		}
		b.WriteString(r.Constants[n-1].SQL())
		i = j - 1
	}
	return b.String()
}

// nameByte reports whether c may continue an unquoted name.
func nameByte(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// Answered reports whether the statement was answered.
func (r Release) Answered() bool { return r.Outcome == OutcomeAnswered }

// Write writes releases as JSON lines.
func Write(w io.Writer, rs []Release) error {
	enc := json.NewEncoder(w)
	for _, r := range rs {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("writing audit export: %w", err)
		}
	}
	return nil
}

// Read reads JSON lines written by Write.
func Read(r io.Reader) ([]Release, error) {
	var out []Release
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<26)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var rel Release
		if err := json.Unmarshal(sc.Bytes(), &rel); err != nil {
			return nil, fmt.Errorf("audit export line %d: %w", line, err)
		}
		out = append(out, rel)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading audit export: %w", err)
	}
	return out, nil
}
