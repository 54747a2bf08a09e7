package attacks

// IDPMembership is Protivash et al.'s Example 3.9 (REFERENCES.md [PDKDZ24]):
//
//  1. Ask COUNT(*) > k-1 and COUNT(*) > k about the rows matching the
//     person's known attributes, at a tiny epsilon share.
//  2. The person, unique in the population, is in the table iff the second
//     answer is noisy (Lemma 3.3: k-local sensitivity 1 at b = k iff the
//     count is at least 1).
var IDPMembership = &Attack{
	Name:    "idp-membership",
	Against: "idp",
	Source:  "Protivash et al. Ex. 3.9, Table 2",
	Summary: "whether a person unique in the population is in the table, in 2 threshold queries at almost no claimed epsilon",
	Script:  func(o Options) []string { return targetScript(o, membershipThresholds(scriptK(o))) },
	Run:     membership.run,
	Score:   membership.score,
	Flags:   thresholdFlags,
	Demo: func() Options {
		// The demo person is in the table; a year younger no one is:
		// --where "suburb = 'suburb_0163' AND age = 64 AND sex = 'M'"
		// shows the other verdict.
		return Options{Target: Target{Table: "people", Where: demoPerson}, Threshold: ThresholdSetup{GroupK: -1}}
	},
}

func init() { register(IDPMembership) }

// membershipThresholds are b = k-1 and b = k. Under exact (k = 0) they are
// the same 0 and 1 as under idp with k = 1: b = -1 would say nothing.
func membershipThresholds(k int64) [2]int64 {
	k = max(k, 1)
	return [2]int64{k - 1, k}
}
