package mechanisms

import (
	"reflect"
	"strings"
	"testing"

	"countwall/ir"
)

func TestSuppress(t *testing.T) {
	var (
		sup  = Answer{Suppressed: true}
		drop = Answer{Dropped: true}
	)
	tests := []struct {
		name   string
		p      Params
		q      *ir.Query
		counts []int64
		want   []Answer
	}{
		{"default s = 10: 10 withheld, 11 exact", nil, groupedCountQuery(nil),
			[]int64{0, 1, 10, 11, 500}, []Answer{sup, sup, sup, {Int: 11}, {Int: 500}}},
		{"s = 0 withholds only zero cells", Params{"threshold": 0}, groupedCountQuery(nil),
			[]int64{0, 1}, []Answer{sup, {Int: 1}}},
		{"s from a string", Params{"threshold": "2"}, &ir.Query{},
			[]int64{2}, []Answer{sup}},
		{"COUNT(DISTINCT unit)", Params{"threshold": 4}, &ir.Query{Agg: ir.CountDistinct},
			[]int64{5}, []Answer{{Int: 5}}},
		{"drop mode drops withheld grouped cells, zero cells too", Params{"threshold": 3, "mode": "drop"}, groupedCountQuery(nil),
			[]int64{0, 3, 4}, []Answer{drop, drop, {Int: 4}}},
		// A COUNT without GROUP BY always returns one row, so drop mode
		// publishes its withheld cell as a suppressed 0.
		{"drop mode without GROUP BY suppresses", Params{"threshold": 3, "mode": "drop"}, &ir.Query{},
			[]int64{2}, []Answer{sup}},
		{"threshold query: published counts compared", Params{"threshold": 3}, groupedCountQuery(&ir.Threshold{Bound: 5}),
			[]int64{5, 6}, []Answer{{Int: 0}, {Int: 1}}},
		{"threshold query: a withheld count stays a suppressed 0", Params{"threshold": 3}, &ir.Query{Threshold: &ir.Threshold{Bound: 0}},
			[]int64{2}, []Answer{sup}},
		{"threshold query in drop mode keeps the drop", Params{"threshold": 3, "mode": "drop"}, groupedCountQuery(&ir.Threshold{Bound: 0}),
			[]int64{2, 9}, []Answer{drop, {Int: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMechanismForTest(t, "suppress", tt.p, 0)
			got := answerWithoutCharge(t, m, countCellsRequest(tt.q, tt.counts...))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSuppressDescribe(t *testing.T) {
	zero := newMechanismForTest(t, "suppress", Params{"threshold": 5}, 0).(Describer).Describe()
	if !strings.Contains(zero, "counts <= 5 are published as 0") {
		t.Errorf("zero mode claim %q does not state the rule", zero)
	}
	drop := newMechanismForTest(t, "suppress", Params{"mode": "drop"}, 0).(Describer).Describe()
	if !strings.Contains(drop, "counts <= 10 are left out") {
		t.Errorf("drop mode claim %q does not state the rule", drop)
	}
}
