package state

import "testing"

func TestTranslate(t *testing.T) {
	cases := []struct{ in, want string }{
		{`SELECT a FROM t WHERE x = ? AND y = ?`, `SELECT a FROM t WHERE x = $1 AND y = $2`},
		{`SELECT coalesce((SELECT e FROM s WHERE a = ?1 AND k = ?2), 0), (SELECT d FROM s WHERE a = ?1)`,
			`SELECT coalesce((SELECT e FROM s WHERE a = $1 AND k = $2), 0), (SELECT d FROM s WHERE a = $1)`},
		{`SELECT '?' , "a?b", ?`, `SELECT '?' , "a?b", $1`},
		{`UPDATE s SET e = max(0, s.e + excluded.e), d = MIN(d, coalesce(x, 1))`,
			`UPDATE s SET e = greatest(0, s.e + excluded.e), d = least(d, coalesce(x, 1))`},
		{`SELECT max(e), min(d), summax(a, b) FROM s`, `SELECT max(e), min(d), summax(a, b) FROM s`},
		{"CREATE TABLE IF NOT EXISTS s (\n\tid INTEGER PRIMARY KEY,\n\tv BLOB NOT NULL,\n\te REAL NOT NULL\n)",
			"CREATE TABLE IF NOT EXISTS s (\n\tid BIGSERIAL PRIMARY KEY,\n\tv BYTEA NOT NULL,\n\te DOUBLE PRECISION NOT NULL\n)"},
		{`ALTER TABLE audit ADD COLUMN epsilon REAL NOT NULL DEFAULT 0`, `ALTER TABLE audit ADD COLUMN IF NOT EXISTS epsilon DOUBLE PRECISION NOT NULL DEFAULT 0`},
		{`SELECT real, blob FROM t`, `SELECT real, blob FROM t`},
		{`INSERT OR IGNORE INTO secret (id, value) VALUES (1, ?)`, `INSERT INTO secret (id, value) VALUES (1, $1) ON CONFLICT DO NOTHING`},
	}
	for _, tc := range cases {
		if got := translate(tc.in); got != tc.want {
			t.Errorf("translate(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func TestIsURL(t *testing.T) {
	for s, want := range map[string]bool{
		"postgres://u@h/db": true, "POSTGRESQL://h/db": true, "state.db": false, "/var/lib/postgres/state.db": false, "": false,
	} {
		if got := IsPostgresURL(s); got != want {
			t.Errorf("IsPostgresURL(%q) = %v", s, got)
		}
	}
}
