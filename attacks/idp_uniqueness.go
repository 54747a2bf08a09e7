package attacks

// IDPUniqueness is Protivash et al.'s Example 3.8 (REFERENCES.md [PDKDZ24]):
//
//  1. Ask COUNT(*) > k and COUNT(*) > k+1 about the rows matching the known
//     attributes, at a tiny epsilon share.
//  2. They single out exactly one row iff the first answer is noisy and the
//     second the exact 0.
var IDPUniqueness = &Attack{
	Name:    "idp-uniqueness",
	Against: "idp",
	Source:  "Protivash et al. Ex. 3.8",
	Summary: "whether known attributes single out exactly one row, in 2 threshold queries at almost no claimed epsilon",
	Script:  func(o Options) []string { return targetScript(o, uniquenessThresholds(scriptK(o))) },
	Run:     uniqueness.run,
	Score:   uniqueness.score,
	Flags:   thresholdFlags,
	Demo: func() Options {
		return Options{Target: Target{Table: "people", Where: demoPerson}, Threshold: ThresholdSetup{GroupK: -1}}
	},
}

func init() { register(IDPUniqueness) }

// uniquenessThresholds are b = k and b = k+1.
func uniquenessThresholds(k int64) [2]int64 { return [2]int64{k, k + 1} }
