// Package snapshot answers counts from an in-memory copy of each protected
// SQLite table: one column of value codes per column, its dictionary in
// SQLite's sort order, read in one read transaction and read again whenever
// the file changes. What it cannot hold or answer, it hands to the SQL
// backend it was opened with (Fallback, which is planner/sqlite).
//
// # What the Engine hands it
//
// Store.Run takes the catalog's *ir.Table, a validated *ir.Query, the
// ir.Needs of the mechanism and the firewall's secret, as every backend does
// (proxy.Backend). Needs says which figures to compute beside the counts
// (Units, Key, TableSize, Conditions); Bound and Bounds ask for counts
// bounded per privacy unit; GroupLimit replaces the table's max_groups for
// the mechanisms that drop low counts; Oblivious asks for work that does not
// depend on the stored values (below).
//
// # What it returns
//
// The figures SQLite's compiled SQL would return, to the bit: the same cells
// in the same order, the same counts, distinct units and contributor keys
// (sums of plan.RecordKey mod 2^32), the same domain filling and ORDER BY
// (plan.Shape), with Result.Path set to ir.PathSnapshot. It answers a query
// from memory only where its answer cannot differ from SQLite's, and declines
// the rest: arithmetic in WHERE; a column declared with a collation other
// than BINARY; a literal of another kind than its column's affinity (SQLite
// would convert it); units counted on a unit column of no affinity (always
// under Oblivious, otherwise when it holds both integers and reals);
// contributor keys under bounds; GROUP BY columns whose cells do not fit
// 32-bit numbers; and a table over the memory limit
// (plan.StoreOptions.SnapshotMaxBytes, 1 GiB by default) or one it cannot
// read. A declined query goes to the fallback, under the same deadline.
//
// Errors are those of the SQL backend for the same statement: plan.Prepare's
// for a table and query that do not belong together (XX000); more groups
// than the limit (54000); the deadline (plan.StoreOptions.QueryTimeout) or a
// cancel (57014, and an answer finished after it is withheld, as SQLite's
// would be); plan.ErrNotUnitKeyed, wrapped, for a table declared unit_keyed
// that is not. No error holds a stored value.
//
// # What its work may depend on
//
// Under Needs.Oblivious, which the Engine sets under every mechanism that
// claims a per-person loss, which path answers, memory or SQLite, is decided
// from the statement, the config, the declared schema and the table's size
// against the memory limit, never from a stored value; and the work depends
// on the statement, the schema and the table's rows, columns and dictionary
// sizes only: every leaf condition reads every row's code in one branch-free
// pass, AND, OR and NOT combine whole row sets, and a GROUP BY visits every
// row and each unit's every cell (oblivious.go). Without it, the fast ways
// follow how many rows hold each value named: row lists, row sets of frequent
// values, cuts of the dictionary, per-value tallies and conjunctions
// evaluated most selective first (leaf.go, rowsets.go, tallies.go).
// docs/timing.md says what is left under Oblivious and how large it is.
//
// # How it is tested
//
// Its own tests hold its parts (LIKE, declared collations, the oblivious
// kernels, cell totals, the cache of cell orders) and hold it to SQLite
// figure by figure (the same file opened through planner/sqlite alone, its
// fallback) on tables of every storage class, long tables, wide dictionaries,
// concurrent queries, writes by another connection and reloads, under every
// leaf way (LeafWay) and under Oblivious; planner's differential test runs
// it, with SQLite and PostgreSQL, on one corpus of seeded random predicates
// against a reference evaluation in Go.
package snapshot
