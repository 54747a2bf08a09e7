package proxy

import (
	"context"
	"strings"
	"testing"
)

// A withheld count is NULL, with a notice naming the rows withheld, and
// the in-process table shows it as the wire sends it; the audit keeps the
// 0 it stands for with the mark, as the wire sent it.
func TestWithheldCountsAreNull(t *testing.T) {
	f := newFixture(t, 200)
	e := f.open(t, "suppress", map[string]any{"threshold": 150})
	ctx := context.Background()
	tests := []struct {
		sql     string
		nulls   []bool
		notice  string
		printed string
	}{
		{"SELECT COUNT(*) FROM people WHERE age > 70", []bool{true},
			"the count is withheld (NULL): too small to publish under the mechanism in force", " NULL\n"},
		{"SELECT sex, COUNT(*) FROM people GROUP BY sex", []bool{true, true},
			"2 of 2 counts withheld (NULL), too small to publish under the mechanism in force: sex = F; sex = M", " F   | NULL\n"},
		{"SELECT COUNT(*) FROM people", []bool{false}, "", " 200\n"},
	}
	for _, tt := range tests {
		res, err := e.Query(ctx, "alice", tt.sql)
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range tt.nulls {
			if v := res.Rows[i][res.countColumn()]; v.Null != want || res.Suppressed[i] != want {
				t.Errorf("%s: row %d is %+v (suppressed %v), want NULL %v", tt.sql, i, v, res.Suppressed[i], want)
			}
		}
		if res.Notice != tt.notice {
			t.Errorf("%s: notice %q, want %q", tt.sql, res.Notice, tt.notice)
		}
		var table strings.Builder
		res.WriteTable(&table)
		if !strings.Contains(table.String(), tt.printed) || (tt.notice != "" && !strings.Contains(table.String(), "NOTICE: "+tt.notice)) {
			t.Errorf("%s: printed\n%s", tt.sql, table.String())
		}
		if text := res.Text(); tt.nulls[0] && text.Values[0][len(text.Columns)-1] != "" {
			t.Errorf("%s: as text %q, want the empty NULL", tt.sql, text.Values[0])
		}
	}
	// A long list names the first ten rows.
	res, err := e.Query(ctx, "alice", "SELECT age, COUNT(*) FROM people GROUP BY age")
	if err != nil {
		t.Fatal(err)
	}
	if want := "60 of 60 counts withheld (NULL), too small to publish under the mechanism in force: age = 18; age = 19;"; !strings.HasPrefix(res.Notice, want) ||
		!strings.HasSuffix(res.Notice, "; age = 27; and 50 more") {
		t.Errorf("notice %q", res.Notice)
	}
	e.state.Flush()
	log, err := e.state.AuditLog(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	grouped := log[len(log)-3]
	if len(grouped.Cells) != 2 {
		t.Fatalf("the GROUP BY's audit row holds %+v", grouped.Cells)
	}
	for _, c := range grouped.Cells {
		if c.Value != 0 || !c.Suppressed {
			t.Errorf("the audit keeps a withheld count as %+v, want its 0 marked as the wire sent it", c)
		}
	}
}
