package catalog

import (
	"fmt"
	"strings"
)

// relation is one catalog table or view clients query, as a SQLite table.
// The declared types name the PostgreSQL type the column is sent as (see
// wireType): BOOL, a name with INT (an integer, with SQLite's integer
// affinity so that oid = '16384' compares as PostgreSQL does), FLOAT, or text.
type relation struct {
	schema, name, columns string
}

// keys are the primary keys of the relations without an oid column, which
// are made WITHOUT ROWID tables: in an ordinary SQLite table "oid" names the
// rowid, so a client's unqualified oid in a subquery over pg_description
// (obj_description(oid)) would mean the description's rowid instead of the
// outer relation's oid, as it does in PostgreSQL. An empty relation's key is
// its first column.
var keys = map[string]string{
	"pg_catalog.pg_attribute":        "attrelid, attnum",
	"pg_catalog.pg_description":      "objoid, classoid, objsubid",
	"pg_catalog.pg_settings":         "name",
	"pg_catalog.pg_tables":           "schemaname, tablename",
	"pg_catalog.pg_stat_user_tables": "relid",
	"pg_catalog.pg_user":             "usesysid",
	"pg_catalog.pg_auth_members":     "roleid, member",
	"information_schema.schemata":    "schema_name",
	"information_schema.tables":      "table_schema, table_name",
	"information_schema.columns":     "table_schema, table_name, column_name",
	"main.cw_names":                  "cw_kind, cw_name, cw_oid, cw_display",
}

// createStatement is a relation's CREATE TABLE.
func (r relation) createStatement() string {
	q := r.schema + "." + r.name
	if strings.HasPrefix(strings.TrimSpace(r.columns), "oid ") || strings.Contains(r.columns, ", oid OID_INT") {
		return fmt.Sprintf("CREATE TABLE %s (%s)", q, r.columns)
	}
	key, ok := keys[q]
	if !ok {
		key = strings.Fields(r.columns)[0]
	}
	return fmt.Sprintf("CREATE TABLE %s (%s, PRIMARY KEY (%s)) WITHOUT ROWID", q, r.columns, key)
}

// relations are the catalog relations answered. Those never filled (keys,
// indexes, triggers, policies, statistics, ...) exist so that a client's
// query over them compiles and finds what PostgreSQL finds for a table
// without them: nothing.
var relations = []relation{
	{"pg_catalog", "pg_namespace", "oid OID_INT, nspname NAME_TEXT, nspowner OID_INT, nspacl ARRAY_TEXT"},
	{"pg_catalog", "pg_class", `oid OID_INT, relname NAME_TEXT, relnamespace OID_INT, reltype OID_INT, reloftype OID_INT,
		relowner OID_INT, relam OID_INT, relfilenode OID_INT, reltablespace OID_INT, relpages INT4, reltuples FLOAT4,
		relallvisible INT4, reltoastrelid OID_INT, relhasindex BOOL, relisshared BOOL, relpersistence CHAR, relkind CHAR,
		relnatts INT2, relchecks INT2, relhasrules BOOL, relhastriggers BOOL, relhassubclass BOOL, relrowsecurity BOOL,
		relforcerowsecurity BOOL, relispopulated BOOL, relreplident CHAR, relispartition BOOL, relrewrite OID_INT,
		relfrozenxid INT8, relminmxid INT8, relacl ARRAY_TEXT, reloptions ARRAY_TEXT, relpartbound TEXT`},
	{"pg_catalog", "pg_attribute", `attrelid OID_INT, attname NAME_TEXT, atttypid OID_INT, attstattarget INT4, attlen INT2,
		attnum INT2, attndims INT4, attcacheoff INT4, atttypmod INT4, attbyval BOOL, attalign CHAR, attstorage CHAR,
		attcompression CHAR, attnotnull BOOL, atthasdef BOOL, atthasmissing BOOL, attidentity CHAR, attgenerated CHAR,
		attisdropped BOOL, attislocal BOOL, attinhcount INT4, attcollation OID_INT, attacl ARRAY_TEXT, attoptions ARRAY_TEXT,
		attfdwoptions ARRAY_TEXT`},
	{"pg_catalog", "pg_type", `oid OID_INT, typname NAME_TEXT, typnamespace OID_INT, typowner OID_INT, typlen INT2,
		typbyval BOOL, typtype CHAR, typcategory CHAR, typispreferred BOOL, typisdefined BOOL, typdelim CHAR,
		typrelid OID_INT, typsubscript TEXT, typelem OID_INT, typarray OID_INT, typinput TEXT, typoutput TEXT,
		typreceive TEXT, typsend TEXT, typmodin TEXT, typmodout TEXT, typanalyze TEXT, typalign CHAR, typstorage CHAR,
		typnotnull BOOL, typbasetype OID_INT, typtypmod INT4, typndims INT4, typcollation OID_INT, typdefaultbin TEXT,
		typdefault TEXT, typacl ARRAY_TEXT`},
	{"pg_catalog", "pg_database", `oid OID_INT, datname NAME_TEXT, datdba OID_INT, encoding INT4, datlocprovider CHAR,
		datistemplate BOOL, datallowconn BOOL, datconnlimit INT4, datfrozenxid INT8, datminmxid INT8,
		dattablespace OID_INT, datcollate TEXT, datctype TEXT, daticulocale TEXT, datcollversion TEXT, datacl ARRAY_TEXT`},
	{"pg_catalog", "pg_roles", `rolname NAME_TEXT, rolsuper BOOL, rolinherit BOOL, rolcreaterole BOOL, rolcreatedb BOOL,
		rolcanlogin BOOL, rolreplication BOOL, rolconnlimit INT4, rolpassword TEXT, rolvaliduntil TEXT, rolbypassrls BOOL,
		rolconfig ARRAY_TEXT, oid OID_INT`},
	{"pg_catalog", "pg_auth_members", "roleid OID_INT, member OID_INT, grantor OID_INT, admin_option BOOL"},
	{"pg_catalog", "pg_user", `usename NAME_TEXT, usesysid OID_INT, usecreatedb BOOL, usesuper BOOL, userepl BOOL,
		usebypassrls BOOL, passwd TEXT, valuntil TEXT, useconfig ARRAY_TEXT`},
	{"pg_catalog", "pg_description", "objoid OID_INT, classoid OID_INT, objsubid INT4, description TEXT"},
	{"pg_catalog", "pg_am", "oid OID_INT, amname NAME_TEXT, amhandler TEXT, amtype CHAR"},
	{"pg_catalog", "pg_collation", `oid OID_INT, collname NAME_TEXT, collnamespace OID_INT, collowner OID_INT,
		collprovider CHAR, collisdeterministic BOOL, collencoding INT4, collcollate TEXT, collctype TEXT`},
	{"pg_catalog", "pg_tablespace", "oid OID_INT, spcname NAME_TEXT, spcowner OID_INT, spcacl ARRAY_TEXT, spcoptions ARRAY_TEXT"},
	{"pg_catalog", "pg_settings", "name TEXT, setting TEXT, unit TEXT, category TEXT, short_desc TEXT, vartype TEXT, source TEXT"},
	{"pg_catalog", "pg_tables", `schemaname NAME_TEXT, tablename NAME_TEXT, tableowner NAME_TEXT, tablespace NAME_TEXT,
		hasindexes BOOL, hasrules BOOL, hastriggers BOOL, rowsecurity BOOL`},
	{"pg_catalog", "pg_stat_user_tables", `relid OID_INT, schemaname NAME_TEXT, relname NAME_TEXT, seq_scan INT8,
		seq_tup_read INT8, idx_scan INT8, idx_tup_fetch INT8, n_tup_ins INT8, n_tup_upd INT8, n_tup_del INT8,
		n_live_tup INT8, n_dead_tup INT8, last_analyze TEXT, last_autoanalyze TEXT, analyze_count INT8`},
	{"pg_catalog", "pg_proc", `oid OID_INT, proname NAME_TEXT, pronamespace OID_INT, proowner OID_INT, prokind CHAR,
		prorettype OID_INT, proargtypes ARRAY_TEXT, prosrc TEXT`},
	{"pg_catalog", "pg_attrdef", "oid OID_INT, adrelid OID_INT, adnum INT2, adbin TEXT"},
	{"pg_catalog", "pg_index", `indexrelid OID_INT, indrelid OID_INT, indnatts INT2, indnkeyatts INT2, indisunique BOOL,
		indnullsnotdistinct BOOL, indisprimary BOOL, indisexclusion BOOL, indimmediate BOOL, indisclustered BOOL,
		indisvalid BOOL, indcheckxmin BOOL, indisready BOOL, indislive BOOL, indisreplident BOOL, indkey ARRAY_TEXT,
		indcollation ARRAY_TEXT, indclass ARRAY_TEXT, indoption ARRAY_TEXT, indexprs TEXT, indpred TEXT`},
	{"pg_catalog", "pg_constraint", `oid OID_INT, conname NAME_TEXT, connamespace OID_INT, contype CHAR,
		condeferrable BOOL, condeferred BOOL, convalidated BOOL, conrelid OID_INT, contypid OID_INT, conindid OID_INT,
		conparentid OID_INT, confrelid OID_INT, confupdtype CHAR, confdeltype CHAR, confmatchtype CHAR, conislocal BOOL,
		coninhcount INT4, connoinherit BOOL, conkey ARRAY_TEXT, confkey ARRAY_TEXT, conpfeqop ARRAY_TEXT,
		conppeqop ARRAY_TEXT, conffeqop ARRAY_TEXT, confdelsetcols ARRAY_TEXT, conexclop ARRAY_TEXT, conbin TEXT`},
	{"pg_catalog", "pg_inherits", "inhrelid OID_INT, inhparent OID_INT, inhseqno INT4, inhdetachpending BOOL"},
	{"pg_catalog", "pg_policy", `oid OID_INT, polname NAME_TEXT, polrelid OID_INT, polcmd CHAR, polpermissive BOOL,
		polroles ARRAY_TEXT, polqual TEXT, polwithcheck TEXT`},
	{"pg_catalog", "pg_statistic_ext", `oid OID_INT, stxrelid OID_INT, stxname NAME_TEXT, stxnamespace OID_INT,
		stxowner OID_INT, stxstattarget INT4, stxkeys ARRAY_TEXT, stxkind ARRAY_TEXT, stxexprs TEXT`},
	{"pg_catalog", "pg_publication", `oid OID_INT, pubname NAME_TEXT, pubowner OID_INT, puballtables BOOL, pubinsert BOOL,
		pubupdate BOOL, pubdelete BOOL, pubtruncate BOOL, pubviaroot BOOL`},
	{"pg_catalog", "pg_publication_rel", "oid OID_INT, prpubid OID_INT, prrelid OID_INT, prqual TEXT, prattrs ARRAY_TEXT"},
	{"pg_catalog", "pg_publication_namespace", "oid OID_INT, pnpubid OID_INT, pnnspid OID_INT"},
	{"pg_catalog", "pg_trigger", `oid OID_INT, tgrelid OID_INT, tgparentid OID_INT, tgname NAME_TEXT, tgfoid OID_INT,
		tgtype INT2, tgenabled CHAR, tgisinternal BOOL, tgconstrrelid OID_INT, tgconstrindid OID_INT,
		tgconstraint OID_INT, tgdeferrable BOOL, tginitdeferred BOOL, tgnargs INT2, tgattr ARRAY_TEXT, tgargs TEXT,
		tgqual TEXT, tgoldtable NAME_TEXT, tgnewtable NAME_TEXT`},
	{"pg_catalog", "pg_rewrite", `oid OID_INT, rulename NAME_TEXT, ev_class OID_INT, ev_type CHAR, ev_enabled CHAR,
		is_instead BOOL, ev_qual TEXT, ev_action TEXT`},
	{"pg_catalog", "pg_sequence", `seqrelid OID_INT, seqtypid OID_INT, seqstart INT8, seqincrement INT8, seqmax INT8,
		seqmin INT8, seqcache INT8, seqcycle BOOL`},
	{"pg_catalog", "pg_enum", "oid OID_INT, enumtypid OID_INT, enumsortorder FLOAT4, enumlabel NAME_TEXT"},
	{"pg_catalog", "pg_range", `rngtypid OID_INT, rngsubtype OID_INT, rngmultitypid OID_INT, rngcollation OID_INT,
		rngsubopc OID_INT, rngcanonical TEXT, rngsubdiff TEXT`},
	{"pg_catalog", "pg_stats", `schemaname NAME_TEXT, tablename NAME_TEXT, attname NAME_TEXT, inherited BOOL,
		null_frac FLOAT4, avg_width INT4, n_distinct FLOAT4, most_common_vals TEXT, most_common_freqs ARRAY_TEXT,
		histogram_bounds TEXT, correlation FLOAT4`},
	{"pg_catalog", "pg_statistic", "starelid OID_INT, staattnum INT2, stainherit BOOL, stanullfrac FLOAT4, stawidth INT4, stadistinct FLOAT4"},
	{"pg_catalog", "pg_extension", "oid OID_INT, extname NAME_TEXT, extowner OID_INT, extnamespace OID_INT, extrelocatable BOOL, extversion TEXT"},
	{"pg_catalog", "pg_foreign_table", "ftrelid OID_INT, ftserver OID_INT, ftoptions ARRAY_TEXT"},
	{"pg_catalog", "pg_partitioned_table", `partrelid OID_INT, partstrat CHAR, partnatts INT2, partdefid OID_INT,
		partattrs ARRAY_TEXT, partclass ARRAY_TEXT, partcollation ARRAY_TEXT, partexprs TEXT`},
	{"pg_catalog", "pg_depend", `classid OID_INT, objid OID_INT, objsubid INT4, refclassid OID_INT, refobjid OID_INT,
		refobjsubid INT4, deptype CHAR`},
	{"pg_catalog", "pg_views", "schemaname NAME_TEXT, viewname NAME_TEXT, viewowner NAME_TEXT, definition TEXT"},
	{"pg_catalog", "pg_matviews", `schemaname NAME_TEXT, matviewname NAME_TEXT, matviewowner NAME_TEXT,
		tablespace NAME_TEXT, hasindexes BOOL, ispopulated BOOL, definition TEXT`},
	{"pg_catalog", "pg_indexes", "schemaname NAME_TEXT, tablename NAME_TEXT, indexname NAME_TEXT, tablespace NAME_TEXT, indexdef TEXT"},

	{"information_schema", "schemata", `catalog_name TEXT, schema_name TEXT, schema_owner TEXT,
		default_character_set_catalog TEXT, default_character_set_schema TEXT, default_character_set_name TEXT, sql_path TEXT`},
	{"information_schema", "tables", `table_catalog TEXT, table_schema TEXT, table_name TEXT, table_type TEXT,
		self_referencing_column_name TEXT, reference_generation TEXT, user_defined_type_catalog TEXT,
		user_defined_type_schema TEXT, user_defined_type_name TEXT, is_insertable_into TEXT, is_typed TEXT, commit_action TEXT`},
	{"information_schema", "columns", `table_catalog TEXT, table_schema TEXT, table_name TEXT, column_name TEXT,
		ordinal_position INT4, column_default TEXT, is_nullable TEXT, data_type TEXT, character_maximum_length INT4,
		character_octet_length INT4, numeric_precision INT4, numeric_precision_radix INT4, numeric_scale INT4,
		datetime_precision INT4, interval_type TEXT, interval_precision INT4, character_set_catalog TEXT,
		character_set_schema TEXT, character_set_name TEXT, collation_catalog TEXT, collation_schema TEXT,
		collation_name TEXT, domain_catalog TEXT, domain_schema TEXT, domain_name TEXT, udt_catalog TEXT,
		udt_schema TEXT, udt_name TEXT, scope_catalog TEXT, scope_schema TEXT, scope_name TEXT,
		maximum_cardinality INT4, dtd_identifier TEXT, is_self_referencing TEXT, is_identity TEXT,
		identity_generation TEXT, identity_start TEXT, identity_increment TEXT, identity_maximum TEXT,
		identity_minimum TEXT, identity_cycle TEXT, is_generated TEXT, generation_expression TEXT, is_updatable TEXT`},
	{"information_schema", "views", "table_catalog TEXT, table_schema TEXT, table_name TEXT, view_definition TEXT, check_option TEXT, is_updatable TEXT"},
	{"information_schema", "table_constraints", `constraint_catalog TEXT, constraint_schema TEXT, constraint_name TEXT,
		table_catalog TEXT, table_schema TEXT, table_name TEXT, constraint_type TEXT, is_deferrable TEXT,
		initially_deferred TEXT, enforced TEXT, nulls_distinct TEXT`},
	{"information_schema", "key_column_usage", `constraint_catalog TEXT, constraint_schema TEXT, constraint_name TEXT,
		table_catalog TEXT, table_schema TEXT, table_name TEXT, column_name TEXT, ordinal_position INT4,
		position_in_unique_constraint INT4`},
	{"information_schema", "referential_constraints", `constraint_catalog TEXT, constraint_schema TEXT,
		constraint_name TEXT, unique_constraint_catalog TEXT, unique_constraint_schema TEXT, unique_constraint_name TEXT,
		match_option TEXT, update_rule TEXT, delete_rule TEXT`},
	{"information_schema", "routines", "specific_catalog TEXT, specific_schema TEXT, specific_name TEXT, routine_name TEXT, routine_type TEXT, data_type TEXT"},
	{"information_schema", "sequences", "sequence_catalog TEXT, sequence_schema TEXT, sequence_name TEXT, data_type TEXT"},
}

// namesDDL is a hidden helper table: the names of types, relations and
// schemas by kind (regtype, regclass, regnamespace), for casts to and from
// the reg types and format_type(). Display marks the name an oid is shown
// as (format_type's "bigint", not "int8"). Its columns are named cw_* so
// that no column of a client's query resolves to them (and clients cannot
// name them: translate refuses cw_ names).
var namesTable = relation{"main", "cw_names", "cw_kind TEXT, cw_oid INTEGER, cw_name TEXT, cw_display INTEGER"}
