package proxy

import (
	"context"
	"fmt"
	"os"
	"testing"

	"countwall/dataset/pgcopy"
	"countwall/internal/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// TestPostgresEnginesAgreeWithSQLite fronts one table from SQLite and from
// a PostgreSQL copy. Under one secret, every mechanism that adds no fresh
// noise gives the same answers from both, GROUP BY cells included; and two
// engines sharing a PostgreSQL state (each drawing nothing of its own) give
// the same sticky cellkey noise, as instances behind a load balancer must.
func TestPostgresEnginesAgreeWithSQLite(t *testing.T) {
	srv := pgtest.Server(t)
	ctx := context.Background()
	f := newFixture(t, 2000)
	store, state := srv.NewDatabase(t), srv.NewDatabase(t)
	if _, err := pgcopy.Table(ctx, f.database, "people", store); err != nil {
		t.Fatal(err)
	}
	secret := []byte("a firewall secret of 32 bytes...")
	pg := &fixture{dir: t.TempDir(), database: store, state: state}
	queries := []string{"SELECT sex, COUNT(*) FROM people WHERE suburb < 'suburb_03' GROUP BY sex"}
	for age := 18; age < 78; age += 3 {
		queries = append(queries, fmt.Sprintf("SELECT COUNT(*) FROM people WHERE age = %d AND income >= 20000", age))
	}
	for _, m := range []struct {
		name   string
		params map[string]any
	}{
		{"exact", nil},
		{"suppress", map[string]any{"threshold": 10}},
		{"cellkey", map[string]any{"ptable": "uniform", "d": 2, "suppress_at": 4}},
		{"layered", nil},
	} {
		open := func(fx *fixture) *Engine {
			e, err := Open(ctx, fx.config(t, m.name, m.params), Options{NoiseSeed: 1, Secret: secret})
			if err != nil {
				t.Fatalf("%s: %v", m.name, err)
			}
			t.Cleanup(func() { e.Close() })
			return e
		}
		lite, post := open(f), open(pg)
		for _, q := range queries {
			a, b := counts(t, lite, q), counts(t, post, q)
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Errorf("%s: %s: SQLite store %v, PostgreSQL store %v", m.name, q, a, b)
			}
		}
	}

	// Two instances on one PostgreSQL state share its secret.
	var first, second *Engine
	for _, e := range []**Engine{&first, &second} {
		var err error
		*e, err = Open(ctx, pg.config(t, "cellkey", map[string]any{"ptable": "uniform", "d": 2, "suppress_at": 4}), Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { (*e).Close() })
	}
	for _, q := range queries {
		if a, b := counts(t, first, q), counts(t, second, q); fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("cellkey on one shared state: %s: %v from one instance, %v from the other", q, a, b)
		}
	}
}
