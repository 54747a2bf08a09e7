package mechanisms

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"

	"countwall/ir"
)

// A new mechanism is one file and one registration line. This file is the
// whole of one, as a user would add it (with a name no config would pick):
// it rounds every count to the nearest multiple of its parameter base.
// Nothing else in the tree changes for the registry, the config's
// mechanism.params, SHOW mechanism and the Engine to know it.

func init() { Register("rounded-example", newRoundedExample) }

type roundedExample struct{ base int64 }

func newRoundedExample(p Params, _ Env) (Mechanism, error) {
	params := struct {
		Base int64 `mapstructure:"base"`
	}{Base: 5}
	if err := decodeParams(p, &params); err != nil {
		return nil, err
	}
	if err := intParamIn("base", params.Base, 1, math.MaxInt64); err != nil {
		return nil, err
	}
	return roundedExample{base: params.Base}, nil
}

func (roundedExample) Name() string    { return "rounded-example" }
func (roundedExample) Needs() ir.Needs { return ir.Needs{} }

func (m roundedExample) Answer(_ context.Context, req *Request) ([]Answer, Charge, error) {
	cells, err := requestCells(req)
	if err != nil {
		return nil, Charge{}, err
	}
	answers := make([]Answer, len(cells))
	for i, c := range cells {
		answers[i] = Answer{Int: (c.Count + m.base/2) / m.base * m.base}
	}
	return thresholdAnswers(req.Query, answers), Charge{}, nil
}

// TestOneFileMechanism builds the mechanism above by name, as the Engine
// does from a config, and checks its answers and its parameter errors.
func TestOneFileMechanism(t *testing.T) {
	m, err := New("rounded-example", Params{"base": 10}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	got := answerWithoutCharge(t, m, countCellsRequest(groupedCountQuery(nil), 0, 4, 5, 14, 15, 250))
	want := []Answer{{Int: 0}, {Int: 0}, {Int: 10}, {Int: 10}, {Int: 20}, {Int: 250}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("answers %+v, want %+v", got, want)
	}
	for _, tc := range []struct {
		params Params
		want   string
	}{
		{Params{"base": 0}, `mechanism parameter "base"`},
		{Params{"bse": 3}, `did you mean "base"`},
	} {
		if _, err := New("rounded-example", tc.params, Env{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%v): err = %v, want it to contain %q", tc.params, err, tc.want)
		}
	}
}
