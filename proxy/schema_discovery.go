package proxy

import (
	"context"
	"sort"
	"strconv"
	"strings"

	"countwall/ir"
	"countwall/pgtypes"
	"countwall/proxy/catalog"
)

// catalogModel is what clients' schema discovery is told: each configured
// table with its analyst-visible columns in the protected table's order,
// their types, the privacy unit and the declared domains. The column order
// is read from the store's schema, never from its rows.
func catalogModel(ctx context.Context, store Store, cat *ir.Catalog) (*catalog.Model, error) {
	m := &catalog.Model{ServerVersion: ServerVersion}
	names := make([]string, 0, len(cat.Tables))
	for name := range cat.Tables {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t := cat.Tables[name]
		order, err := store.Columns(ctx, t.Name)
		if err != nil {
			return nil, err
		}
		table := catalog.Table{Name: t.Name}
		for _, info := range order {
			c, ok := t.Columns[strings.ToLower(info.Name)]
			if !ok {
				continue // not visible to analysts
			}
			table.Columns = append(table.Columns, catalogColumn(c, c.Name == t.PrivacyUnit))
		}
		m.Tables = append(m.Tables, table)
	}
	return m, nil
}

func catalogColumn(c *ir.Column, unit bool) catalog.Column {
	out := catalog.Column{Name: c.Name, Unit: unit}
	switch c.Type {
	case ir.TypeInt:
		out.Type = catalog.BigInt
	case ir.TypeReal:
		out.Type = catalog.Double
	default:
		out.Type = catalog.Text
	}
	if d := c.Domain; d != nil {
		out.HasDomain, out.IsRange, out.Min, out.Max = true, d.IsRange, d.Min, d.Max
		out.Categories = append([]string(nil), d.Categories...)
	}
	return out
}

// openCatalog builds the schema-discovery catalog of the config in force.
func (e *Engine) openCatalog(ctx context.Context) error {
	m, err := catalogModel(ctx, e.store, e.live.Load().catalog)
	if err != nil {
		return err
	}
	e.schema, err = catalog.Open(ctx, m)
	return err
}

// reloadCatalog tells schema discovery the tables of a new config.
func (e *Engine) reloadCatalog(ctx context.Context, cat *ir.Catalog) error {
	m, err := catalogModel(ctx, e.store, cat)
	if err != nil {
		return err
	}
	return e.schema.Load(ctx, m)
}

// catalogQuery answers a schema-discovery statement. It charges nothing and
// reads nothing but the catalog, which holds no protected row. Bound
// arguments (args not nil) mean the extended protocol, where the client was
// told the columns' types at Describe: the answer keeps them.
func (s *Session) catalogQuery(ctx context.Context, sql string, args []*string) (*Result, error) {
	query := s.engine.schema.Query
	if args != nil {
		query = s.engine.schema.QueryDescribed
	}
	res, err := query(ctx, catalog.Session{Analyst: s.analyst}, sql, args)
	if err != nil {
		return nil, err
	}
	out := &Result{Columns: catalogColumns(res.Columns), Tag: "SELECT " + strconv.Itoa(len(res.Rows))}
	for _, row := range res.Rows {
		vals := make([]Value, len(row))
		for i, v := range row {
			vals[i] = Value{Null: v.Null, Text: v.Text, Int: v.Int, Float: v.Float}
			if res.Columns[i].Type == catalog.WireBool && v.Bool {
				vals[i].Int = 1
			}
		}
		out.Rows = append(out.Rows, vals)
		out.Suppressed = append(out.Suppressed, false)
	}
	return out, nil
}

// describeCatalog says what a schema-discovery statement returns and what
// its parameters are.
func (s *Session) describeCatalog(ctx context.Context, sql string) (*Description, error) {
	cols, params, err := s.engine.schema.Describe(ctx, catalog.Session{Analyst: s.analyst}, sql)
	if err != nil {
		return nil, publicError(err)
	}
	d := &Description{Columns: catalogColumns(cols), Params: make([]pgtypes.OID, len(params))}
	for i, p := range params {
		d.Params[i] = pgtypes.Text
		if p == catalog.WireInt8 {
			d.Params[i] = pgtypes.Int8
		}
	}
	return d, nil
}

func catalogColumns(cols []catalog.OutputColumn) []Column {
	out := make([]Column, len(cols))
	for i, c := range cols {
		out[i].Name = c.Name
		switch c.Type {
		case catalog.WireInt8:
			out[i].Type = ColumnInt8
		case catalog.WireFloat8:
			out[i].Type = ColumnFloat8
		case catalog.WireBool:
			out[i].Type = ColumnBool
		case catalog.WireTextArray:
			out[i].Type = ColumnTextArray
		case catalog.WireInt8Array:
			out[i].Type = ColumnInt8Array
		default:
			out[i].Type = ColumnText
		}
	}
	return out
}
