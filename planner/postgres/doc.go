// Package postgres answers counts from a protected PostgreSQL database,
// opened read-only, through SQL rendered from the validated query with bound
// parameters (planner/sqlgen's PostgreSQL dialect), giving the figures the
// SQLite backend gives on the same rows.
//
// # What the Engine hands it
//
// Store.Run takes the catalog's *ir.Table, a validated *ir.Query, the
// ir.Needs of the mechanism and the firewall's secret (proxy.Backend), as
// the SQLite backend does, and reads the same Needs: Units, Key, TableSize,
// Conditions, Bound and Bounds, GroupLimit. Oblivious asks nothing of it:
// every query is answered by PostgreSQL, and no in-memory path exists here.
//
// # What it returns
//
// The SQLite backend's cells for the same data, in its order (NULL first,
// numbers, text bytewise under the "C" collation), domain filling and ORDER
// BY included, with Result.Path set to ir.PathPostgres. Plain counts and
// units are one aggregate in PostgreSQL; contributor keys and bounded counts
// need the firewall's keyed hashes, so PostgreSQL returns one row per (cell,
// unit) and the cells are finished in Go with plan.RecordKey and
// plan.CellRank, or, with countwall_keys=pgcrypto in the URL, the keys are
// computed by pgcrypto's hmac() and only the cells travel.
//
// Errors: plan.Prepare's (XX000); contributor keys under bounds and bounds
// below 1 (XX000); more groups than the limit (54000); the store's
// QueryTimeout or a cancel (57014). What PostgreSQL reports is wrapped as a
// plain error with its own SQLSTATE kept for the log (a write is refused by
// the server with 25006); the Engine shows it as XX000.
//
// # What it may depend on
//
// Every session is read-only (default_transaction_read_only); when both are
// asked for, the cells and the table's size are read in one REPEATABLE READ
// transaction. Tables are
// those of the connection's search_path, by their exact (case-sensitive)
// names. The time of a query follows the data, as PostgreSQL's plan and
// scan do, under every mechanism.
//
// # How it is tested
//
// planner's differential test runs it against a real server
// (internal/pgtest, where PostgreSQL is installed), with keys computed in
// the firewall and by pgcrypto, on the corpus the SQLite backend and the
// snapshot run, against the same reference evaluation in Go; its own tests
// hold what it shows of a URL.
package postgres
