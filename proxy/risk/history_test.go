package risk

import (
	"reflect"
	"testing"

	"countwall/proxy/state/release"
)

// TestHistoryReadOneAtATimeAssessesAsTheReleases: the history audit risk
// and the monitor fill one statement at a time gives the findings and the
// answered counts Assess gives on the releases, per analyst, with the
// analyst filter applied while reading.
func TestHistoryReadOneAtATimeAssessesAsTheReleases(t *testing.T) {
	q := func(b int64) *release.Query {
		return above(b, count("people", eq("suburb", str("s1")), eq("age", num("40"))))
	}
	rs := []release.Release{
		ask(1, "eve", "idp", q(0), 1),
		ask(2, "mallory", "suppress", count("people"), 3000),
		ask(3, "eve", "idp", q(1), 4.1e9),
		ask(4, "mallory", "suppress", count("people", nots(eq("suburb", str("suburb_0015")), gt("age", num("60")))), 2997),
		ask(5, "eve", "idp", q(3), 0),
		{ID: 6, Analyst: "eve", Kind: "set", Outcome: "answered"},
	}
	for _, analyst := range []string{"", "eve", "mallory", "nobody"} {
		h := NewHistory(analyst)
		for _, r := range rs {
			h.Add(r)
		}
		o := Options{Analyst: analyst}
		got, want := AssessHistory(h, o), Assess(rs, o)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("analyst %q: history %+v, releases %+v", analyst, got, want)
		}
		if analyst == "eve" && (len(got) != 1 || got[0].Answered != 3) {
			t.Errorf("eve's report %+v, want one with 3 answered statements", got)
		}
		if analyst == "nobody" && len(got) != 0 {
			t.Errorf("nobody's reports %+v, want none", got)
		}
	}
}
