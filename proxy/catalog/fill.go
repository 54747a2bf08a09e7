package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Object identifiers as PostgreSQL 15 numbers them.
const (
	oidPgCatalog         = 11
	oidPublic            = 2200
	oidInformationSchema = 13000
	oidOwner             = 10
	oidDatabase          = 16383
	oidHeapAM            = 2
	oidBtreeAM           = 403
	oidDefaultTablespace = 1663
	oidPgClass           = 1259 // pg_class's own oid: pg_description.classoid of a relation
	oidDefaultCollation  = 100
	firstTableOID        = 16384
)

// pgType is one built-in type clients may look up.
type pgType struct {
	oid      int64
	name     string
	format   string // what format_type prints
	length   int64
	category string
	array    int64 // its array type
	elem     int64 // for an array type, the element type
}

var builtinTypes = []pgType{
	{16, "bool", "boolean", 1, "B", 1000, 0},
	{17, "bytea", "bytea", -1, "U", 1001, 0},
	{18, "char", "\"char\"", 1, "Z", 1002, 0},
	{19, "name", "name", 64, "S", 1003, 0},
	{20, "int8", "bigint", 8, "N", 1016, 0},
	{21, "int2", "smallint", 2, "N", 1005, 0},
	{23, "int4", "integer", 4, "N", 1007, 0},
	{25, "text", "text", -1, "S", 1009, 0},
	{26, "oid", "oid", 4, "N", 1028, 0},
	{114, "json", "json", -1, "U", 199, 0},
	{700, "float4", "real", 4, "N", 1021, 0},
	{701, "float8", "double precision", 8, "N", 1022, 0},
	{1042, "bpchar", "character", -1, "S", 1014, 0},
	{1043, "varchar", "character varying", -1, "S", 1015, 0},
	{1082, "date", "date", 4, "D", 1182, 0},
	{1114, "timestamp", "timestamp without time zone", 8, "D", 1115, 0},
	{1184, "timestamptz", "timestamp with time zone", 8, "D", 1185, 0},
	{1700, "numeric", "numeric", -1, "N", 1231, 0},
	{2205, "regclass", "regclass", 4, "N", 2210, 0},
	{2206, "regtype", "regtype", 4, "N", 2211, 0},
	{2950, "uuid", "uuid", 16, "U", 2951, 0},
	{3802, "jsonb", "jsonb", -1, "U", 3807, 0},
}

// typeOf is the built-in type a column is shown as.
func typeOf(t ColumnType) pgType {
	switch t {
	case BigInt:
		return builtinTypes[4]
	case Double:
		return builtinTypes[11]
	default:
		return builtinTypes[7]
	}
}

// fill replaces the catalog's rows with the model's.
func fill(ctx context.Context, conn *sql.Conn, m *Model) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	for _, r := range relations {
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+r.schema+"."+r.name); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM main.cw_names"); err != nil {
		return err
	}
	f := &filler{ctx: ctx, tx: tx}
	f.fixed()
	f.types()
	for i, t := range m.sortedTables() {
		f.table(int64(firstTableOID+2*i), t)
	}
	if f.err != nil {
		return f.err
	}
	return tx.Commit()
}

// filler inserts rows, keeping the first error.
type filler struct {
	ctx context.Context
	tx  *sql.Tx
	err error
}

// insert adds a row to a relation, a value for each of its columns in
// their order.
func (f *filler) insert(rel string, values ...any) {
	if f.err != nil {
		return
	}
	marks := strings.TrimSuffix(strings.Repeat("?,", len(values)), ",")
	cols := []string{"cw_kind", "cw_oid", "cw_name", "cw_display"}
	if rel != "main.cw_names" {
		cols = columnNames(rel)
	}
	if len(values) != len(cols) {
		f.err = fmt.Errorf("catalog: %d values for %s's %d columns", len(values), rel, len(cols))
		return
	}
	stmt := fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", rel, strings.Join(cols, ","), marks)
	if _, err := f.tx.ExecContext(f.ctx, stmt, values...); err != nil {
		f.err = fmt.Errorf("catalog: filling %s: %w", rel, err)
	}
}

// name records a name of an object for the reg casts and format_type.
func (f *filler) name(kind string, oid int64, name string, display bool) {
	f.insert("main.cw_names", kind, oid, name, display)
}

// columnNames lists a relation's columns, from its declaration.
func columnNames(qualified string) []string {
	for _, r := range relations {
		if r.schema+"."+r.name != qualified {
			continue
		}
		var names []string
		for _, c := range strings.Split(r.columns, ",") {
			names = append(names, strings.Fields(c)[0])
		}
		return names
	}
	return nil
}

func (f *filler) fixed() {
	for _, ns := range []struct {
		oid   int64
		name  string
		owner int64
	}{{oidPgCatalog, "pg_catalog", oidOwner}, {oidPublic, "public", 6171}, {oidInformationSchema, "information_schema", oidOwner}} {
		f.insert("pg_catalog.pg_namespace", ns.oid, ns.name, ns.owner, nil)
		f.name("regnamespace", ns.oid, ns.name, true)
		f.insert("information_schema.schemata", DatabaseName, ns.name, Owner, nil, nil, nil, nil)
	}
	f.insert("pg_catalog.pg_roles", Owner, 0, 1, 0, 0, 1, 0, -1, "********", nil, 0, nil, oidOwner)
	f.insert("pg_catalog.pg_roles", "pg_database_owner", 0, 1, 0, 0, 0, 0, -1, "********", nil, 0, nil, 6171)
	f.insert("pg_catalog.pg_user", Owner, oidOwner, 0, 0, 0, 0, "********", nil, nil)
	f.insert("pg_catalog.pg_database", oidDatabase, DatabaseName, oidOwner, 6, "c", 0, 1, -1, 0, 0,
		oidDefaultTablespace, "C.UTF-8", "C.UTF-8", nil, nil, nil)
	f.insert("pg_catalog.pg_am", oidHeapAM, "heap", "heap_tableam_handler", "t")
	f.insert("pg_catalog.pg_am", oidBtreeAM, "btree", "bthandler", "i")
	f.insert("pg_catalog.pg_tablespace", oidDefaultTablespace, "pg_default", oidOwner, nil, nil)
	f.insert("pg_catalog.pg_collation", oidDefaultCollation, "default", oidPgCatalog, oidOwner, "d", 1, -1, nil, nil)
	for _, s := range [][2]string{
		{"max_index_keys", "32"}, {"max_identifier_length", "63"}, {"server_encoding", "UTF8"},
		{"standard_conforming_strings", "on"}, {"integer_datetimes", "on"}, {"search_path", "public"},
	} {
		f.insert("pg_catalog.pg_settings", s[0], s[1], nil, "Preset Options", "", "string", "default")
	}
}

func (f *filler) types() {
	for _, t := range builtinTypes {
		f.insert("pg_catalog.pg_type", t.oid, t.name, oidPgCatalog, oidOwner, t.length, t.length > 0 && t.length <= 8,
			"b", t.category, 0, 1, ",", 0, nil, 0, t.array, t.name+"in", t.name+"out", t.name+"recv", t.name+"send",
			nil, nil, nil, "i", "p", 0, 0, -1, 0, collationOf(t), nil, nil, nil)
		f.name("regtype", t.oid, t.name, false)
		f.name("regtype", t.oid, t.format, true)
		f.insert("pg_catalog.pg_type", t.array, "_"+t.name, oidPgCatalog, oidOwner, -1, 0, "b", "A", 0, 1, ",", 0,
			"array_subscript_handler", t.oid, 0, "array_in", "array_out", "array_recv", "array_send",
			nil, nil, nil, "i", "x", 0, 0, -1, 0, 0, nil, nil, nil)
		f.name("regtype", t.array, "_"+t.name, false)
		f.name("regtype", t.array, t.format+"[]", true)
	}
}

// table adds a protected table, its row type, its columns and their
// comments. Its statistics are those of a table never analysed.
func (f *filler) table(oid int64, t Table) {
	rowType := oid + 1
	f.insert("pg_catalog.pg_class", oid, t.Name, oidPublic, rowType, 0, oidOwner, oidHeapAM, oid, 0,
		0, -1, 0, 0, 0, 0, "p", "r", len(t.Columns), 0, 0, 0, 0, 0, 0, 1, "d", 0, 0, 0, 1, nil, nil, nil)
	f.insert("pg_catalog.pg_type", rowType, t.Name, oidPublic, oidOwner, -1, 0, "c", "C", 0, 1, ",", oid, nil, 0, 0,
		"record_in", "record_out", "record_recv", "record_send", nil, nil, nil, "d", "x", 0, 0, -1, 0, 0, nil, nil, nil)
	f.name("regtype", rowType, t.Name, true)
	f.name("regclass", oid, t.Name, true)
	f.insert("pg_catalog.pg_tables", "public", t.Name, Owner, nil, 0, 0, 0, 0)
	f.insert("pg_catalog.pg_stat_user_tables", oid, "public", t.Name, 0, 0, nil, nil, 0, 0, 0, 0, 0, nil, nil, 0)
	f.insert("information_schema.tables", DatabaseName, "public", t.Name, "BASE TABLE", nil, nil, nil, nil, nil, "NO", "NO", nil)
	for i, c := range t.Columns {
		num := int64(i + 1)
		typ := typeOf(c.Type)
		f.insert("pg_catalog.pg_attribute", oid, c.Name, typ.oid, -1, typ.length, num, 0, -1, -1,
			typ.length > 0, "i", "p", "", 0, 0, 0, "", "", 0, 1, 0, collationOf(typ), nil, nil, nil)
		if comment := c.comment(); comment != "" {
			f.insert("pg_catalog.pg_description", oid, oidPgClass, num, comment)
		}
		f.column(t.Name, num, c.Name, typ)
	}
}

func collationOf(t pgType) int64 {
	if t.category == "S" {
		return oidDefaultCollation
	}
	return 0
}

// column adds information_schema.columns' row of a column.
func (f *filler) column(table string, num int64, name string, t pgType) {
	var precision, radix, scale any
	switch t.name {
	case "int8":
		precision, radix, scale = 64, 2, 0
	case "float8":
		precision, radix = 53, 2
	}
	f.insert("information_schema.columns", DatabaseName, "public", table, name, num, nil, "YES", t.format,
		nil, nil, precision, radix, scale, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil,
		DatabaseName, "pg_catalog", t.name, nil, nil, nil, nil, fmt.Sprint(num), "NO", "NO", nil, nil, nil, nil, nil, "NO",
		"NEVER", nil, "NO")
}
