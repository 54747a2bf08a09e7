package experiments

import "github.com/spf13/pflag"

// AddFlags defines the flags of `countwall attack noise-remover-table3` on
// f, with the paper's settings as defaults, bound to o.
func (o *Table3Options) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.AdultCSV, "adult", "../shared/data/adult.csv", "the Adult census extract (CSV with id and age columns)")
	f.IntVar(&o.Runs, "runs", 20, "runs per (D, k); the paper averages 100")
	f.IntSliceVar(&o.Ds, "d", []int{2, 3, 5}, "perturbation bounds D")
	f.IntSliceVar(&o.Ks, "k", []int{50, 100, 200, 250}, "two-partitions per value")
	f.IntVar(&o.BaseK, "base-k", 1000, "two-partitions for the base set's total")
	f.Uint64Var(&o.Seed, "seed", 0, "seed for secrets and two-partitions (0: random)")
	f.BoolVar(&o.Simulated, "simulated", false, "answer through Engines on the grouped stand-in (planner/grouped) instead of SQLite")
	f.IntVar(&o.Parallel, "parallel", 0, "firewalls attacked at once, each with its own Engine (0: one per CPU)")
}
