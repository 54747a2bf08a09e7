package attacks_test

import (
	"context"
	"sync"
	"testing"

	"countwall/config"
	"countwall/dataset/pgcopy"
	"countwall/internal/pgtest"
)

// onPostgres, when set, makes openEngine front a PostgreSQL copy of the
// fixture instead of the SQLite file: the same tests, the other store.
var onPostgres *postgresCopies

// postgresCopies holds one PostgreSQL database per SQLite fixture, copied
// on first use and dropped when the test that set onPostgres ends.
type postgresCopies struct {
	owner *testing.T
	srv   *pgtest.Srv
	mu    sync.Mutex
	urls  map[string]string // SQLite path -> PostgreSQL URL
}

func (p *postgresCopies) copyOf(t testing.TB, cfg *config.Config) string {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if url, ok := p.urls[cfg.Database]; ok {
		return url
	}
	url := p.srv.NewDatabase(p.owner)
	for table := range cfg.Tables {
		if _, err := pgcopy.Table(context.Background(), cfg.Database, table, url); err != nil {
			t.Fatalf("copying the fixture to PostgreSQL: %v", err)
		}
	}
	p.urls[cfg.Database] = url
	return url
}

// TestPostgresAttacksThroughTheEngine runs the attack tests that go through
// an Engine against a PostgreSQL store holding the same tables: every
// recovery, refusal and budget stop must be what it is on SQLite.
func TestPostgresAttacksThroughTheEngine(t *testing.T) {
	srv := pgtest.Server(t)
	onPostgres = &postgresCopies{owner: t, srv: srv, urls: map[string]string{}}
	defer func() { onPostgres = nil }()
	for name, test := range map[string]func(*testing.T){
		"bdp existence":                 TestBDPExistenceThroughEngine,
		"idp reconstruct":               TestIDPReconstructThroughTheEngine,
		"idp membership and uniqueness": TestIDPMembershipAndUniquenessThroughEngine,
		"idp attribute":                 TestIDPAttributeThroughEngine,
		"idp variance":                  TestIDPVarianceThroughEngine,
		"noise remover":                 TestNoiseRemoverThroughTheEngine,
		"grouped stand-in":              TestGroupedStandInAnswersAsTheEngine,
		"linear reconstruction":         TestLinearReconstructionThroughTheEngine,
		"prior release":                 TestPriorReleaseAgainstLaplace,
		"split averaging":               TestSplitAveraging,
		"tracing":                       TestTracingThroughTheEngine,
		"suite":                         TestRunSuiteScoresEachAttackAgainstItsMechanism,
	} {
		t.Run(name, test)
	}
}
