// Package grouped is the stand-in backend of the papers' experiments: a
// table held as the groups of the few columns a query may name, each with
// its row count and the sum of its record keys, so that a COUNT is a sum
// over the groups its WHERE selects: a fraction of a microsecond instead of
// a pass over the rows. Behind the Engine (proxy.Options.Grouped) the
// parser, SET, SHOW, the budget, the audit and the mechanisms are the
// Engine's own; only the reading of the data is this package's.
//
// Under the additive key model (ir.AdditiveKeys), with the groups' keys
// summed from plan.RecordKey under the firewall's secret (FromSQLite), every
// answer is the one the SQLite backend would give. The independent one
// (ir.IndependentKeys) gives every distinct contributor set its own random
// key: the model of Asghar and Kaafar's Algorithm 1, in which different
// contributor sets draw independent noise. The table it serves is described
// by ir.GroupedTable, which proxy.Options.Grouped takes.
//
// # What the Engine hands it
//
// Store.Run takes the catalog's *ir.Table, a validated *ir.Query, the
// ir.Needs and the secret (proxy.Backend). Each row is its own privacy
// unit, so bounded counts (Needs.Bound) are the plain ones, and Oblivious
// changes nothing: the work is one pass over the groups, whatever they hold.
//
// # What it returns
//
// One cell: the rows the WHERE selects, as many units, their contributor key
// under the key model; TableSize and Conditions when asked; Result.Path is
// ir.PathGrouped. It answers COUNT(*) without GROUP BY, over the grouped
// columns, and refuses anything else with 0A000 (COUNT(DISTINCT), GROUP BY,
// a column it did not group by, LIKE, arithmetic); plan.Prepare's errors
// are XX000.
//
// # What it may depend on
//
// Its time follows the number of groups, which is public in the
// experiments that use it; it is not a deployment backend, and proxy.OpenStore
// never chooses it from a config.
//
// # How it is tested
//
// Its own tests hold the key models and its refusals; the Engine's tests
// (proxy, TestGroupedStandInAnswersAsSQLite) hold its additive answers to
// the SQLite backend's, statement by statement under cellkey.
package grouped
