// Package dataset writes the SQLite files countwall protects: deterministic
// synthetic tables (a census-like people table, a bank's marketing calls in the
// shape of the UCI Bank Marketing data, genomes for tracing and the
// Asghar-Kaafar synthetic column) and tables imported from CSV. It is the only code in countwall that
// writes a SQLite file; everything else opens the protected database read-only.
//
// Every write is all-or-nothing. A new file is built under a temporary name in
// the destination directory and renamed into place only once it is complete, so
// a failed or interrupted run leaves no file behind; an import into an existing
// database happens in a single transaction.
package dataset
