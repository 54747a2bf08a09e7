package bench

import "github.com/spf13/pflag"

// AddFlags defines on f the flags that size a bench run (all but the
// work directory, which its command keeps).
func (o *Options) AddFlags(f *pflag.FlagSet) {
	f.IntVar(&o.Rows, "rows", 100_000, "rows in the generated people table")
	o.addRoundFlags(f)
	f.StringVar(&o.AuditSync, "audit-sync", "full", "the firewalls' audit.sync: full (on disk before an answer leaves) or normal")
}

// AddFlags defines on f the flags of `bench postgres` (all but the work
// directory).
func (o *PostgresOptions) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.Store, "store", "", "the protected PostgreSQL database (postgres:// URL)")
	f.StringVar(&o.State, "state", "", "the shared PostgreSQL state database (postgres:// URL)")
	f.IntVar(&o.Rows, "rows", 100_000, "rows of the people table when it must be created")
	o.addRoundFlags(f)
}

func (o *Options) addRoundFlags(f *pflag.FlagSet) {
	f.IntVar(&o.PerRound, "queries", 200, "queries per round")
	f.IntVar(&o.Rounds, "rounds", 3, "rounds per line; the median is reported")
}
