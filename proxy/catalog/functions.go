package catalog

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"modernc.org/sqlite"

	"countwall/pglex"
)

// renderer renders a call from its rendered arguments.
type renderer func(t *translator, args []string) (string, error)

// same keeps a function SQLite has under the same name and meaning.
func same(name string) renderer {
	return func(_ *translator, args []string) (string, error) {
		return name + "(" + strings.Join(args, ", ") + ")", nil
	}
}

// constant answers a function with a fixed value, whatever its arguments.
func constant(sqlValue string) renderer {
	return func(*translator, []string) (string, error) { return sqlValue, nil }
}

// arity checks the number of arguments before rendering.
func arity(n int, r renderer) renderer {
	return func(t *translator, args []string) (string, error) {
		if len(args) < n {
			return "", unsupported(fmt.Sprintf("a call with %d arguments where %d are needed", len(args), n))
		}
		return r(t, args)
	}
}

// functions are the functions catalog queries may call. Anything else is
// refused. None of them reads anything but the catalog.
var functions map[string]renderer

func init() {
	functions = map[string]renderer{
		"coalesce": same("coalesce"), "nullif": same("nullif"), "lower": same("lower"), "upper": same("upper"),
		"length": same("length"), "char_length": same("length"), "replace": same("replace"), "substr": same("substr"),
		"substring": same("substr"), "count": same("count"), "max": same("max"), "min": same("min"), "sum": same("sum"),
		"avg": same("avg"), "abs": same("abs"), "round": same("round"), "ltrim": same("ltrim"), "rtrim": same("rtrim"),
		"btrim": same("trim"), "row_number": same("row_number"), "rank": same("rank"), "dense_rank": same("dense_rank"),
		"concat": same("concat"), "string_agg": same("group_concat"), "array_agg": same("json_group_array"),
		"json_build_object": same("json_object"), "json_agg": same("json_group_array"), "bool_or": same("max"),
		"bool_and": same("min"), "quote_ident": same("cw_quote_ident"), "trim": trimCall,
		"array_to_string": arity(2, func(_ *translator, a []string) (string, error) {
			return "cw_array_to_string(" + a[0] + ", " + a[1] + ")", nil
		}),
		"array_upper":  arity(1, func(_ *translator, a []string) (string, error) { return "json_array_length(" + a[0] + ")", nil }),
		"array_length": arity(1, func(_ *translator, a []string) (string, error) { return "json_array_length(" + a[0] + ")", nil }),
		"cardinality":  arity(1, func(_ *translator, a []string) (string, error) { return "json_array_length(" + a[0] + ")", nil }),

		"version": func(t *translator, _ []string) (string, error) {
			return quoteString("PostgreSQL " + t.model.ServerVersion), nil
		},
		"current_database": constant(quoteString(DatabaseName)),
		"current_schema":   constant(quoteString("public")),
		"current_user":     func(t *translator, _ []string) (string, error) { return quoteString(t.session.Analyst), nil },
		"session_user":     func(t *translator, _ []string) (string, error) { return quoteString(t.session.Analyst), nil },
		"current_schemas": arity(1, func(_ *translator, a []string) (string, error) {
			return "(CASE WHEN " + a[0] + " THEN '[\"pg_catalog\",\"public\"]' ELSE '[\"public\"]' END)", nil
		}),
		"pg_get_userbyid":                 constant(quoteString(Owner)),
		"pg_table_is_visible":             constant("1"),
		"pg_type_is_visible":              constant("1"),
		"pg_function_is_visible":          constant("1"),
		"has_table_privilege":             constant("1"),
		"has_schema_privilege":            constant("1"),
		"has_database_privilege":          constant("1"),
		"has_column_privilege":            constant("1"),
		"pg_encoding_to_char":             constant("'UTF8'"),
		"pg_relation_is_publishable":      constant("0"),
		"pg_is_in_recovery":               constant("0"),
		"pg_get_expr":                     constant("NULL"),
		"pg_get_constraintdef":            constant("NULL"),
		"pg_get_indexdef":                 constant("NULL"),
		"pg_get_viewdef":                  constant("NULL"),
		"pg_get_triggerdef":               constant("NULL"),
		"pg_get_partkeydef":               constant("NULL"),
		"pg_get_serial_sequence":          constant("NULL"),
		"pg_get_statisticsobjdef_columns": constant("NULL"),
		"shobj_description":               constant("NULL"),
		// Sizes of the protected data are not told: 0, as for an empty table.
		"pg_relation_size":       constant("0"),
		"pg_total_relation_size": constant("0"),
		"pg_table_size":          constant("0"),
		"pg_indexes_size":        constant("0"),
		"pg_database_size":       constant("0"),
		"to_regclass":            arity(1, func(_ *translator, a []string) (string, error) { return regLookup("regclass", a[0]), nil }),
		"to_regtype":             arity(1, func(_ *translator, a []string) (string, error) { return regLookup("regtype", a[0]), nil }),
		"to_regnamespace":        arity(1, func(_ *translator, a []string) (string, error) { return regLookup("regnamespace", a[0]), nil }),
		"format_type": arity(1, func(_ *translator, a []string) (string, error) {
			return regName("regtype", a[0]), nil
		}),
		"obj_description": arity(1, func(_ *translator, a []string) (string, error) {
			return "(SELECT description FROM pg_catalog.pg_description WHERE objoid = " + a[0] + " AND objsubid = 0)", nil
		}),
		"col_description": arity(2, func(_ *translator, a []string) (string, error) {
			return "(SELECT description FROM pg_catalog.pg_description WHERE objoid = " + a[0] + " AND objsubid = " + a[1] + ")", nil
		}),
	}
}

var registerOnce sync.Once
var registerErr error

// registerSQLiteFunctions adds the catalog's helper functions to SQLite.
// The registration is process-wide; the protected store never calls them
// (its SQL is rendered by the planner).
func registerSQLiteFunctions() error {
	registerOnce.Do(func() {
		for name, fn := range map[string]struct {
			n  int32
			fn func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error)
		}{
			"regexp":             {2, sqlRegexp},
			"cw_subscript":       {2, sqlSubscript},
			"cw_array_to_string": {2, sqlArrayToString},
			"cw_text":            {1, sqlText},
			"cw_bool":            {1, sqlBool},
			"cw_unqualify":       {1, sqlUnqualify},
			"cw_quote_ident":     {1, sqlQuoteIdent},
			"cw_series":          {2, sqlSeries},
			"cw_array":           {1, sqlArray},
		} {
			if err := sqlite.RegisterDeterministicScalarFunction(name, fn.n, fn.fn); err != nil {
				registerErr = fmt.Errorf("catalog: registering %s: %w", name, err)
				return
			}
		}
	})
	return registerErr
}

var regexpCache sync.Map // pattern -> *regexp.Regexp

// sqlRegexp is SQLite's regexp(pattern, value) for the REGEXP operator.
// Go's RE2 reads the patterns clients send (anchors, groups, classes) as
// PostgreSQL's POSIX engine does.
func sqlRegexp(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	if args[0] == nil || args[1] == nil {
		return nil, nil
	}
	pattern := fmt.Sprint(args[0])
	re, ok := regexpCache.Load(pattern)
	if !ok {
		compiled, err := regexp.Compile(pattern)
		if err != nil {
			return nil, fmt.Errorf("invalid regular expression")
		}
		re, _ = regexpCache.LoadOrStore(pattern, compiled)
	}
	if re.(*regexp.Regexp).MatchString(fmt.Sprint(args[1])) {
		return int64(1), nil
	}
	return int64(0), nil
}

// jsonArray reads an array stored as JSON text.
func jsonArray(v driver.Value) ([]any, bool) {
	s, ok := v.(string)
	if !ok {
		return nil, false
	}
	var a []any
	if json.Unmarshal([]byte(s), &a) != nil {
		return nil, false
	}
	return a, true
}

// sqlSubscript is array[i], 1-based as PostgreSQL's arrays.
func sqlSubscript(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	a, ok := jsonArray(args[0])
	i, isInt := args[1].(int64)
	if !ok || !isInt || i < 1 || int(i) > len(a) {
		return nil, nil
	}
	switch v := a[i-1].(type) {
	case float64:
		return int64(v), nil
	case nil:
		return nil, nil
	default:
		return fmt.Sprint(v), nil
	}
}

func sqlArrayToString(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	a, ok := jsonArray(args[0])
	if !ok {
		return nil, nil
	}
	parts := make([]string, 0, len(a))
	for _, v := range a {
		if v != nil {
			parts = append(parts, fmt.Sprint(v))
		}
	}
	return strings.Join(parts, fmt.Sprint(args[1])), nil
}

// sqlText is a cast to text: booleans are stored as integers, so only the
// value's own form is known; NULL stays NULL.
func sqlText(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	switch v := args[0].(type) {
	case nil:
		return nil, nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), nil
	case []byte:
		return string(v), nil
	default:
		return fmt.Sprint(v), nil
	}
}

func sqlBool(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	switch v := args[0].(type) {
	case nil:
		return nil, nil
	case int64:
		return boolInt(v != 0), nil
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "t", "true", "yes", "y", "on", "1":
			return int64(1), nil
		case "f", "false", "no", "n", "off", "0":
			return int64(0), nil
		}
	}
	return nil, fmt.Errorf("invalid input syntax for type boolean")
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// sqlUnqualify drops a schema and quotes from a name: 'pg_catalog.text',
// '"public"."people"'.
func sqlUnqualify(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	s, ok := args[0].(string)
	if !ok {
		return args[0], nil
	}
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		s = s[i+1:]
	}
	return strings.Trim(s, `"`), nil
}

func sqlQuoteIdent(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	s, ok := args[0].(string)
	if !ok {
		return args[0], nil
	}
	return pglex.QuoteIdent(s), nil
}
