// Package sqlite answers counts from a protected SQLite file, opened
// read-only, through SQL rendered from the validated query with bound
// parameters (planner/sqlgen), in one pass per query. It is the reference
// every other backend is held to, and the fallback of the in-memory
// snapshot (planner/snapshot).
//
// # What the Engine hands it
//
// Store.Run takes the catalog's *ir.Table, a validated *ir.Query, the
// ir.Needs of the mechanism and the firewall's secret (proxy.Backend). Needs
// says which figures to compute beside the counts: distinct units, the
// contributor key (the sum of the units' record keys mod 2^32, keyed by the
// secret), the table's size, the condition list. Bound and Bounds ask for
// counts bounded per privacy unit (at most C rows of a unit per cell, and
// its G cells of smallest plan.CellRank); GroupLimit replaces the table's
// max_groups. Oblivious asks nothing of it: SQL has no data-oblivious
// evaluation, and the snapshot hands it only what the statement and the
// schema decide (docs/timing.md).
//
// # What it returns
//
// One *ir.Result: a plain COUNT has exactly one cell; a GROUP BY whose
// columns all have public domains has every cell of the domain product in
// domain order, zero cells included (DomainComplete); any other GROUP BY
// has the groups found, in SQLite's order, refused past the group limit.
// ORDER BY is then a stable sort. TableSize is read in the same read
// transaction as the cells. Result.Path is ir.PathSQLite.
//
// Errors: plan.Prepare's for a table and query that do not belong together,
// or keys without a secret (XX000); contributor keys under bounds (XX000);
// more groups than the limit (54000); the store's QueryTimeout or a cancel
// (57014). Anything else SQLite reports is wrapped as a plain error, which
// the Engine shows as XX000 and logs; its text names tables and columns,
// never a stored value.
//
// # What it may depend on
//
// The connection is read-only twice over (mode=ro and query_only), with a
// busy timeout and a per-query deadline; the protected file is never
// written. SQLite's time follows the data: it stops an AND at the first false
// condition and reads records of every length. Behind the snapshot, as the
// Engine opens a SQLite file, it answers under the mechanisms that claim a
// loss only what the statement and the declared schema send it
// (docs/timing.md). The SQL functions the rendered SQL calls
// (countwall_record_key, countwall_cell_rank, countwall_group_text,
// countwall_round_half_even) are registered with the driver once per
// process, from planner/plan.
//
// # How it is tested
//
// Its own tests hold its contract on the people table's fixed rows with exact
// figures: counts, units, keys, bounded counts, domains and ORDER BY; each
// refusal and its SQLSTATE; Open's refusals; that nothing is written; the
// unit_keyed check; the SQL functions it registers. planner's differential
// test runs it, with the snapshot and PostgreSQL, on one corpus of seeded
// random predicates against a reference evaluation in Go.
package sqlite
