// Package planner reads an analyst's SQL text into a validated
// ir.Statement: a query the firewall may answer becomes an *ir.Query; SET,
// SHOW and the chatter drivers send on connect become statements of their
// own; anything else is refused with a PostgreSQL SQLSTATE.
//
// The text is read by PostgreSQL's lexical rules (package pglex) and only
// then handed to the MySQL-grammar parser (xwb1989/sqlparser), from tokens
// rendered so that the grammar reads what PostgreSQL would. Prepare reads a
// statement once and Bind gives each execution its $n arguments as typed
// literals (Parse does both); DescribeParams gives the type each $n takes
// from its use.
//
// Every check that can refuse runs here, from the statement, its bound
// values, the catalog and each table's policy alone: syntax (42601),
// constructs outside the COUNT language (0A000), policy (42501), unknown
// names (42P01, 42703), types and input (42804, 42883, 22P02, 22003),
// arithmetic that could fail on a value in a column's declared range (22003,
// 22012), and the statement's size, nesting and lists (54000). An error
// names what the analyst typed, never a value read from the data: the
// planner reads no data at all.
//
// Below it, one package a job: plan holds what every backend shares around
// an ir.Query (the checks before a run, the layout of the cells, bounds, the
// condition list, record keys); sqlgen renders the query as SQL with bound
// parameters; sqlite, postgres, snapshot and grouped are the backends, which
// the Engine chooses among (proxy.OpenStore) and which each state their
// contract in their package documentation. The planner imports none of
// them. Its tests run SQLite, the snapshot and PostgreSQL on one corpus of
// seeded random predicates against a reference evaluation in Go
// (differential_test.go).
package planner
