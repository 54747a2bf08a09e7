package mechanisms

import (
	"reflect"
	"testing"

	"countwall/ir"
)

func TestExact(t *testing.T) {
	m := newMechanismForTest(t, "exact", nil, 0)
	if m.Needs() != (ir.Needs{}) {
		t.Errorf("exact needs %+v; it uses the count only", m.Needs())
	}
	tests := []struct {
		name   string
		q      *ir.Query
		counts []int64
		want   []Answer
	}{
		{"COUNT(*)", &ir.Query{}, []int64{7}, []Answer{{Int: 7}}},
		{"GROUP BY with a zero cell", groupedCountQuery(nil), []int64{0, 1, 250}, []Answer{{Int: 0}, {Int: 1}, {Int: 250}}},
		{"COUNT(DISTINCT unit)", &ir.Query{Agg: ir.CountDistinct}, []int64{3}, []Answer{{Int: 3}}},
		{"COUNT(*) > 3", &ir.Query{Threshold: &ir.Threshold{Bound: 3}}, []int64{3}, []Answer{{Int: 0}}},
		{"grouped COUNT(*) >= 4", groupedCountQuery(&ir.Threshold{Bound: 3}), []int64{0, 3, 4, 100}, []Answer{{Int: 0}, {Int: 0}, {Int: 1}, {Int: 1}}},
		{"no cells", groupedCountQuery(nil), nil, []Answer{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := answerWithoutCharge(t, m, countCellsRequest(tt.q, tt.counts...))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
