package attacks

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"countwall/pglex"
)

// ReconstructedRows is the multiset of rows a reconstruction recovered (over
// the columns it completed), from its result's Details.
func ReconstructedRows(r *Result) ([]string, []RecoveredRow) {
	if r == nil || r.Details == nil {
		return nil, nil
	}
	cols, _ := r.Details["columns"].([]string)
	rows, _ := r.Details["rows"].([]RecoveredRow)
	return cols, rows
}

// scoreReconstruction compares the recovered rows with the target's true
// rows over the same columns, read from the protected database (opened
// read-only), as multisets: CellsTotal is the number of true rows,
// CellsExact the size of the multiset intersection, and Success that size
// over the larger of the two multisets, so that it is 1 only when the table
// was recovered exactly, spurious rows included.
func scoreReconstruction(ctx context.Context, truthPath string, o Options, r *Result) error {
	cols, rows := ReconstructedRows(r)
	truth, err := TrueRows(ctx, truthPath, o.Target, cols)
	if err != nil {
		return err
	}
	var nTruth int64
	for _, c := range truth {
		nTruth += c
	}
	var matched int64
	for _, row := range rows {
		k := reconRowKey(row.Values)
		matched += min(row.Count, truth[k])
	}
	exact := int(matched)
	r.CellsTotal, r.Unit = int(nTruth), "rows recovered exactly"
	r.CellsExact = &exact
	s := 0.0
	if denom := max(nTruth, r.Recovered); denom > 0 {
		s = float64(matched) / float64(denom)
	} else {
		s = 1 // an empty target recovered as empty
	}
	r.Success = &s
	ex := matched == nTruth && matched == r.Recovered
	r.Exact = &ex
	r.Truth = &nTruth
	if !ex {
		scored := fmt.Sprintf("Scored against the truth: %d of the %d rows recovered match its %d rows (%d spurious, %d missed).",
			matched, r.Recovered, nTruth, r.Recovered-matched, nTruth-matched)
		if r.Recovered == 0 {
			scored = fmt.Sprintf("Scored against the truth: no row recovered of its %d.", nTruth)
		}
		r.Note = appendSentence(r.Note, scored)
	}
	if r.Details != nil {
		r.Details["rows_matched"] = matched
		r.Details["rows_spurious"] = r.Recovered - matched
		r.Details["rows_missed"] = nTruth - matched
	}
	return nil
}

// appendSentence adds a sentence to a note, ending the note's last one
// first.
func appendSentence(note, sentence string) string {
	note = strings.TrimSpace(note)
	switch {
	case note == "":
		return sentence
	case !strings.HasSuffix(note, "."):
		note += "."
	}
	return note + " " + sentence
}

func reconRowKey(vals []string) string { return strings.Join(vals, "\x00") }

// TrueRows reads the target's rows over columns from the protected database,
// opened read-only, as a multiset: each distinct row (values as text, joined
// by NUL) with its count. With no columns it is one empty row per target row.
func TrueRows(ctx context.Context, path string, t Target, columns []string) (map[string]int64, error) {
	if !IsIdentifier(t.Table) {
		return nil, fmt.Errorf("table %q must be a plain SQL identifier", t.Table)
	}
	sel := make([]string, len(columns))
	for i, c := range columns {
		if c == "" {
			return nil, fmt.Errorf("a column name is empty")
		}
		sel[i] = "CAST(" + pglex.QuoteIdentAlways(c) + " AS TEXT)"
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, fmt.Errorf("opening the truth database: %w", err)
	}
	defer db.Close()
	query := "SELECT COUNT(*) FROM " + t.Table
	if len(sel) > 0 {
		query = "SELECT " + strings.Join(sel, ", ") + ", COUNT(*) FROM " + t.Table
	}
	if t.Where != "" {
		query += " WHERE " + t.Where
	}
	if len(sel) > 0 {
		query += " GROUP BY " + strings.Join(sel, ", ")
	}
	rs, err := db.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("reading the true rows: %w", err)
	}
	defer rs.Close()
	out := map[string]int64{}
	vals := make([]sql.NullString, len(columns))
	dest := make([]any, len(columns)+1)
	for i := range vals {
		dest[i] = &vals[i]
	}
	var n int64
	dest[len(columns)] = &n
	for rs.Next() {
		if err := rs.Scan(dest...); err != nil {
			return nil, err
		}
		text := make([]string, len(columns))
		for i, v := range vals {
			text[i] = v.String // NULL reads as "", which no domain value is
		}
		out[reconRowKey(text)] += n
	}
	return out, rs.Err()
}
