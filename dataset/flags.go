package dataset

import "github.com/spf13/pflag"

// AddFlags defines the flags of `gen people` on f.
func (o *PeopleOptions) AddFlags(f *pflag.FlagSet) {
	f.Int64Var(&o.Rows, "rows", DefaultPeopleRows, "number of people")
	f.Uint64Var(&o.Seed, "seed", 1, "random seed: the same seed and rows give the same table")
	f.Int64Var(&o.MaxRowsPerPerson, "max-rows-per-person", 1,
		"above 1, a long table: each person gets 1 to this many rows (id is then not a key)")
}

// AddFlags defines the flags of `gen synthetic` on f.
func (o *SyntheticOptions) AddFlags(f *pflag.FlagSet) {
	f.Int64Var(&o.Rows, "rows", DefaultSyntheticRows, "number of rows")
	f.Uint64Var(&o.Seed, "seed", 1, "random seed: the same seed and rows give the same table")
	f.BoolVar(&o.PaperCounts, "paper-counts", false,
		"write exactly the counts of the paper's Table 4 (600,000 rows, shuffled by the seed)")
}

// AddFlags defines the flags of `gen genomes` on f.
func (o *GenomesOptions) AddFlags(f *pflag.FlagSet) {
	f.IntVar(&o.People, "people", DefaultGenomesPeople, "number of people N in the table")
	f.IntVar(&o.SNPs, "snps", DefaultGenomesSNPs, "number of binary attributes D")
	f.Uint64Var(&o.Seed, "seed", 1, "random seed: the same seed, people and snps give the same table")
	f.IntVar(&o.References, "references", 200, "reference samples in the side file")
	f.IntVar(&o.NonMembers, "non-members", 100, "held-out non-members in the side file")
}

// AddFlags defines the flags of `gen bank` on f.
func (o *BankOptions) AddFlags(f *pflag.FlagSet) {
	f.Int64Var(&o.Rows, "rows", DefaultBankRows, "number of clients")
	f.Uint64Var(&o.Seed, "seed", 1, "random seed: the same seed and rows give the same table")
}
