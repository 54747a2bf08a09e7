package attacks

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// An attack declares its own flags in its file (Attack.Flags), bound into
// the Options that its Demo filled, so a flag the user does not give keeps
// the demo default. The command adds the flags every attack shares (the
// firewall to reach, --table, --where, --max-queries, the log and the
// result files). Flag names must not be config keys: config.Load reads the
// same flag set, and a flag named "seed" would set the mechanisms' seed.

// domainsValue is a repeatable --domain flag: col=lo..hi or col=a,b,c.
type domainsValue struct {
	dst     *[]Domain
	changed bool
}

func (d *domainsValue) Set(s string) error {
	dom, err := ParseDomain(s)
	if err != nil {
		return err
	}
	if !d.changed { // the first --domain replaces the demo's list
		*d.dst, d.changed = nil, true
	}
	*d.dst = append(*d.dst, dom)
	return nil
}

func (d *domainsValue) Type() string { return "col=lo..hi|col=a,b,c" }

func (d *domainsValue) String() string {
	if d.dst == nil {
		return ""
	}
	parts := make([]string, len(*d.dst))
	for i, dom := range *d.dst {
		parts[i] = dom.String()
		// --help shows this as the default: a list of a thousand suburbs
		// would bury every other flag.
		if n := len(dom.Categories); n > 6 {
			parts[i] = dom.Column + "=" + strings.Join(dom.Categories[:3], ",") + ",...," + dom.Categories[n-1] + fmt.Sprintf(" (%d values)", n)
		}
	}
	return strings.Join(parts, " ")
}

// String renders a domain as its flag is written.
func (d Domain) String() string {
	if d.Categories != nil {
		return d.Column + "=" + strings.Join(d.Categories, ",")
	}
	return fmt.Sprintf("%s=%d..%d", d.Column, d.Lo, d.Hi)
}

// DomainsFlag adds --domain, bound to dst.
func DomainsFlag(f *pflag.FlagSet, dst *[]Domain, usage string) {
	f.Var(&domainsValue{dst: dst}, "domain", usage)
}

// columnValue is a flag naming a column, read as SQL reads a name
// (ParseColumnName): Age is age, "Age" and "default" are kept as written.
type columnValue struct{ dst *string }

func (c columnValue) Set(s string) error {
	name, err := ParseColumnName(s)
	if err != nil {
		return err
	}
	*c.dst = name
	return nil
}

func (c columnValue) Type() string { return "column" }

func (c columnValue) String() string {
	if c.dst == nil {
		return ""
	}
	return *c.dst
}

// ColumnFlag adds a flag naming a column, bound to dst.
func ColumnFlag(f *pflag.FlagSet, dst *string, name, usage string) {
	f.Var(columnValue{dst: dst}, name, usage+` (a plain name folds to lower case, "Name" keeps its case)`)
}

// thresholdFlags are the flags of the threshold attacks (idp-*,
// bdp-existence): how they meet the firewall.
func thresholdFlags(f *pflag.FlagSet, o *Options) {
	DomainsFlag(f, &o.Domains, "a column's public domain, col=lo..hi or col=a,b,c (repeat the flag; order matters; a plain col folds to lower case, \"Col\" keeps its case)")
	f.Int64Var(&o.Threshold.GroupK, "group-k", o.Threshold.GroupK, "the idp group size k to assume (-1: 1 under idp, 0 under anything else, read with SHOW mechanism)")
	f.Float64Var(&o.Threshold.Epsilon, "epsilon-share", o.Threshold.Epsilon, "the per-query epsilon to ask for with SET epsilon (0: 1e-10)")
	f.Int64Var(&o.Threshold.Rows, "rows", o.Threshold.Rows, "the table size when it is known (0: find it with threshold queries)")
}

// intDomain is an integer domain given as --min and --max: each bound set
// rewrites dst as the SQL literals lo..hi (nil when hi < lo or the range is
// over 100,000 values, which the attack then refuses).
type intDomain struct {
	dst    *[]string
	lo, hi int64
}

type intBound struct {
	d     *intDomain
	bound *int64
}

func (b intBound) Set(s string) error {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return fmt.Errorf("%q is not an integer", s)
	}
	*b.bound = v
	*b.d.dst = nil
	if b.d.hi >= b.d.lo && b.d.hi-b.d.lo <= 100_000 {
		*b.d.dst = IntRange(b.d.lo, b.d.hi)
	}
	return nil
}

// String is empty: the usage states the default.
func (b intBound) String() string { return "" }

func (b intBound) Type() string { return "int" }

// literalList is a comma-separated list of values, kept as SQL literals.
type literalList struct{ dst *[]string }

func (l literalList) Set(s string) error {
	*l.dst = nil
	for _, v := range strings.Split(s, ",") {
		*l.dst = append(*l.dst, Literal(strings.TrimSpace(v)))
	}
	return nil
}

// String is empty: the default domain is --min/--max's.
func (l literalList) String() string { return "" }

func (l literalList) Type() string { return "a,b,c" }
