// Package catalog answers the schema-discovery queries that PostgreSQL
// clients and BI tools send (psql's \dt and \d, SQLAlchemy's inspector,
// JDBC's DatabaseMetaData as DBeaver and Metabase use it, pgx's type
// loading) from the firewall's public metadata only: the configured tables,
// their analyst-visible columns and types, the privacy unit and the declared
// domains.
//
// A statement that names pg_catalog or information_schema is translated
// token by token from PostgreSQL's dialect into SQLite's and evaluated
// against a separate in-memory SQLite database that holds pg_catalog-like
// and information_schema-like tables filled from that metadata. It never
// reaches the protected database and never goes through the COUNT planner,
// so nothing it answers depends on a protected row. Statistics that would
// (row counts, pages, pg_stats) are answered as PostgreSQL answers them for a
// table that was never analysed: reltuples -1, relpages 0, no pg_stats rows.
package catalog

import (
	"fmt"
	"sort"
	"strings"
)

// ColumnType is a column's type as clients are told it.
type ColumnType int

const (
	Text ColumnType = iota
	BigInt
	Double
)

// Column is one analyst-visible column.
type Column struct {
	Name string
	Type ColumnType
	// Unit marks the privacy-unit column.
	Unit bool
	// Categories or Min..Max (when IsRange) are the declared public domain.
	Categories []string
	Min, Max   int64
	IsRange    bool
	HasDomain  bool
}

// Table is one protected table as clients may see it.
type Table struct {
	Name    string
	Columns []Column // in the order clients list them
}

// Model is everything the catalog tells: nothing in it comes from a
// protected row.
type Model struct {
	Tables []Table
	// ServerVersion is what version() reports after "PostgreSQL ".
	ServerVersion string
}

// Session is who asks: current_user and the like answer from it.
type Session struct {
	Analyst string
}

// DatabaseName is the one database the catalog lists; any name a client
// connects with reaches the same firewall.
const DatabaseName = "countwall"

// Owner is the role shown as the owner of every relation and schema.
const Owner = "countwall"

// comment is the column comment clients show (psql \d+, JDBC REMARKS,
// SQLAlchemy's comment): the privacy unit and the declared domain.
func (c Column) comment() string {
	var parts []string
	if c.Unit {
		parts = append(parts, "privacy unit")
	}
	if c.HasDomain {
		if c.IsRange {
			parts = append(parts, fmt.Sprintf("public domain: %d to %d", c.Min, c.Max))
		} else {
			parts = append(parts, "public domain: "+strings.Join(c.Categories, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// sortedTables returns the tables by name, so that oids do not depend on
// the order of a map.
func (m *Model) sortedTables() []Table {
	ts := append([]Table(nil), m.Tables...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	return ts
}
