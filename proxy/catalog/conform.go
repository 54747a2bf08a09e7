package catalog

import (
	"context"
	"strconv"
)

// QueryDescribed answers a statement a client prepared and described: its
// columns keep the types Describe told the client (computed before the
// arguments were bound, so from no rows where the rows depend on them),
// whatever the bound arguments make of the rows. A value that does not fit
// is sent in its text form under a text column, or as NULL under a typed
// one, so that a client reading binary results never misreads bytes.
func (c *Catalog) QueryDescribed(ctx context.Context, s Session, sql string, args []*string) (*Result, error) {
	described, _, err := c.Describe(ctx, s, sql)
	if err != nil {
		return nil, err
	}
	res, err := c.Query(ctx, s, sql, args)
	if err != nil {
		return nil, err
	}
	if len(described) == len(res.Columns) {
		conform(res, described)
	}
	return res, nil
}

// conform converts each column whose type differs from the described one.
func conform(res *Result, described []OutputColumn) {
	for i, want := range described {
		have := res.Columns[i].Type
		if have == want.Type {
			continue
		}
		for _, row := range res.Rows {
			row[i] = convert(row[i], have, want.Type)
		}
		res.Columns[i].Type = want.Type
	}
}

func convert(v Value, from, to WireType) Value {
	if v.Null {
		return v
	}
	text := valueText(v, from)
	switch to {
	case WireText, WireTextArray, WireInt8Array:
		if to != WireText && from != WireTextArray && from != WireInt8Array {
			return Value{Null: true}
		}
		return Value{Text: text}
	case WireInt8:
		n, err := strconv.ParseInt(text, 10, 64)
		return Value{Int: n, Null: err != nil}
	case WireFloat8:
		f, err := strconv.ParseFloat(text, 64)
		return Value{Float: f, Null: err != nil}
	case WireBool:
		b, err := strconv.ParseBool(text)
		return Value{Bool: b, Null: err != nil}
	}
	return Value{Null: true}
}

// valueText is a value's PostgreSQL text form.
func valueText(v Value, t WireType) string {
	switch t {
	case WireInt8:
		return strconv.FormatInt(v.Int, 10)
	case WireFloat8:
		return strconv.FormatFloat(v.Float, 'g', -1, 64)
	case WireBool:
		if v.Bool {
			return "t"
		}
		return "f"
	}
	return v.Text
}
