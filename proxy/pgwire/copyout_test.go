package pgwire

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestCopyOut: psql's \copy (query) TO 'file' sends COPY (query) TO
// STDOUT; it is answered as the query (the same answer), written in COPY's
// text or CSV format, tagged COPY n. (The extended protocol's COPY:
// TestOwnStatementsInExtendedProtocol.)
func TestCopyOut(t *testing.T) {
	ts := startServer(t, "exact", nil, nil)
	ctx := context.Background()
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	query := "SELECT sex, COUNT(*) FROM people GROUP BY sex ORDER BY sex"
	rows, err := conn.Query(ctx, query)
	if err != nil {
		t.Fatal(err)
	}
	var text, csv strings.Builder
	csv.WriteString("sex,count\n")
	n := 0
	for rows.Next() {
		var sex string
		var count int64
		if err := rows.Scan(&sex, &count); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&text, "%s\t%d\n", sex, count)
		fmt.Fprintf(&csv, "%s,%d\n", sex, count)
		n++
	}
	if rows.Err() != nil || n == 0 {
		t.Fatalf("the query answered %d rows, %v", n, rows.Err())
	}
	for _, tc := range []struct {
		sql, want string
	}{
		{"COPY (" + query + ") TO STDOUT", text.String()},
		{"copy ( " + query + " ) to stdout with csv header", csv.String()},
		{"COPY (" + query + ") TO STDOUT WITH (FORMAT csv, HEADER true);", csv.String()},
	} {
		var b bytes.Buffer
		tag, err := conn.PgConn().CopyTo(ctx, &b, tc.sql)
		if err != nil || b.String() != tc.want || tag.String() != fmt.Sprintf("COPY %d", n) {
			t.Errorf("%s: %q, tag %q, %v; want %q, COPY %d", tc.sql, b.String(), tag, err, tc.want, n)
		}
	}
	// psql's own \copy, to a file, as an analyst types it.
	file := filepath.Join(t.TempDir(), "f.csv")
	if out := psqlScript(t, ts, `\copy (`+query+`) to '`+file+`' csv header`+"\n"); !strings.Contains(out, fmt.Sprintf("COPY %d", n)) {
		t.Errorf("psql \\copy printed %q", out)
	}
	if got, err := os.ReadFile(file); err != nil || string(got) != csv.String() {
		t.Errorf("psql \\copy wrote %q, %v; want %q", got, err, csv.String())
	}
}

func TestWriteCopyField(t *testing.T) {
	cases := []struct {
		v         string
		null, csv bool
		want      string
	}{
		{"F", false, false, "F"},
		{"a\tb\\c\nd", false, false, `a\tb\\c\nd`},
		{"", true, false, `\N`},
		{"", true, true, ""},
		{"", false, true, `""`},
		{`say "hi", then`, false, true, `"say ""hi"", then"`},
		{" padded", false, true, `" padded"`},
		{"1320", false, true, "1320"},
	}
	for _, tc := range cases {
		var b bytes.Buffer
		writeCopyField(&b, 0, tc.v, tc.null, tc.csv)
		if b.String() != tc.want {
			t.Errorf("writeCopyField(%q, null %v, csv %v) = %q, want %q", tc.v, tc.null, tc.csv, b.String(), tc.want)
		}
	}
}
