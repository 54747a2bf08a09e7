package proxy

import (
	"context"
	"errors"
	"fmt"

	"countwall/config"
	"countwall/ir"
	"countwall/planner"
	"countwall/planner/plan"
	"countwall/proxy/state/release"
)

// Rereader reads again, through the Engine's own parser and with a config's
// catalog, the statements of answered audit rows written before the audit
// kept their structured record (release.Query), so that `audit risk` reads
// old rows as it reads new ones. It opens the protected database for its
// schema only and reads no row of it.
type Rereader struct {
	store Store
	cat   *ir.Catalog
}

// OpenRereader reads cfg's catalog; the caller closes the Rereader.
func OpenRereader(ctx context.Context, cfg *config.Config) (*Rereader, error) {
	store, err := OpenStore(cfg.Database, plan.StoreOptions{NoSnapshot: true})
	if err != nil {
		return nil, fmt.Errorf("opening protected database: %w", err)
	}
	cat, err := buildCatalog(ctx, store, cfg)
	if err != nil {
		store.Close()
		return nil, err
	}
	return &Rereader{store: store, cat: cat}, nil
}

// Close releases the protected database.
func (r *Rereader) Close() error { return r.store.Close() }

// errNotQuery is a statement that reads again as something else than a
// COUNT query.
var errNotQuery = errors.New("not a COUNT query")

// Query is the structured record of an answered statement's text, as
// Execute makes it but without contribution bounds, which depend on the
// mechanism that answered; an error for a statement that no longer
// validates against the catalog (a column removed or made unqueryable
// since).
func (r *Rereader) Query(sql string) (*release.Query, error) {
	stmt, err := planner.Prepare(sql, r.cat).Bind(nil)
	if err != nil {
		return nil, err
	}
	q, ok := stmt.(*ir.Query)
	if !ok {
		return nil, errNotQuery
	}
	return releaseQuery(q, nil), nil
}

// Fill gives an answered query's release its structured record when it
// has none, and says whether it has one now; a release of anything else
// needs none and is left as it is.
func (r *Rereader) Fill(rel *release.Release) bool {
	if rel.Query != nil || !rel.Answered() || rel.Kind != "query" {
		return true
	}
	q, err := r.Query(rel.Statement())
	if err != nil {
		return false
	}
	rel.Query = q
	return true
}
