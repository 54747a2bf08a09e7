package risk

import (
	"reflect"
	"testing"

	"countwall/proxy/state/release"
)

// TestDeclaredDomainClosesEnds: a search whose first and last values were
// counted with ranges open at the domain's ends (sex < 'M', age < 31, sex
// >= 'M'), with no answer saying the ends are empty, rebuilds its rows only
// when the columns' declared domains close those ends.
func TestDeclaredDomainClosesEnds(t *testing.T) {
	n := func(v string) release.Constant { return release.Constant{Text: v} }
	answers := []struct {
		where []release.Conjunct
		v     float64
	}{
		{nil, 3},
		{[]release.Conjunct{lt("sex", str("M"))}, 1},
		{[]release.Conjunct{lt("sex", str("M")), lt("age", n("31"))}, 1},
		{[]release.Conjunct{ge("sex", str("M")), lt("age", n("41"))}, 0},
		{[]release.Conjunct{ge("sex", str("M")), lt("age", n("42"))}, 2},
	}
	var rs []release.Release
	for i, a := range answers {
		rs = append(rs, ask(int64(i+1), "rob", "exact", count("people", append([]release.Conjunct{eq("zip", num("1"))}, a.where...)...), a.v))
	}
	rowsOf := func(o Options) [][]string {
		var cells [][]string
		for _, f := range findings(t, rs, o) {
			if f.Pattern == "row reconstruction" {
				cells = append(cells, f.Cell)
			}
		}
		return cells
	}
	if got := rowsOf(Options{}); got != nil {
		t.Errorf("open ends, no domain: rows %v, want none", got)
	}
	declared := Options{Domains: map[string]map[string]Domain{"people": {
		"sex": {Categories: []string{"M", "F"}}, "age": {Min: 30, Max: 99}, "zip": {Min: 0, Max: 9}}}}
	want := [][]string{{"zip = 1", "sex = 'F'", "age = 30"}, {"zip = 1", "sex = 'M'", "age = 41"}}
	if got := rowsOf(declared); !reflect.DeepEqual(got, want) {
		t.Errorf("closed ends: rows %v, want %v", got, want)
	}
	// A domain of the other kind (integers for a text column) closes nothing.
	wrong := Options{Domains: map[string]map[string]Domain{"people": {"sex": {Min: 0, Max: 1}, "age": {Categories: []string{"30"}}}}}
	if got := rowsOf(wrong); got != nil {
		t.Errorf("domains of the other kind: rows %v, want none", got)
	}
}
