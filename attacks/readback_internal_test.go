package attacks

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

// answering is a firewall that answers SHOW budget and SHOW mechanism, or,
// closed, nothing at all.
type answering struct{ closed bool }

func (a answering) Query(_ context.Context, sql string) (*Rows, error) {
	if a.closed {
		return nil, errors.New("conn closed")
	}
	switch sql {
	case "SHOW budget":
		return &Rows{Columns: []string{"kind", "spent"}, Values: [][]string{{"dp", "0.3"}}}, nil
	case "SHOW mechanism":
		return &Rows{Columns: []string{"mechanism"}, Values: [][]string{{"laplace"}}}, nil
	}
	return nil, errors.New("unexpected " + sql)
}

// The budget and the mechanism are read back through the run's connection,
// or, when an interrupt closed it (pgx closes a connection whose query was
// cancelled), through a new one; with neither, nothing is read.
func TestReadBackAfterTheConnectionClosed(t *testing.T) {
	reopened := 0
	reopen := func(context.Context) (Querier, func(), error) {
		reopened++
		return answering{}, func() {}, nil
	}
	for _, tc := range []struct {
		name       string
		q          Querier
		reopen     func(context.Context) (Querier, func(), error)
		wantSpent  map[string]float64
		wantMech   string
		wantReopen int
	}{
		{"open", answering{}, reopen, map[string]float64{"dp": 0.3}, "laplace", 0},
		{"closed", answering{closed: true}, reopen, map[string]float64{"dp": 0.3}, "laplace", 1},
		{"closed, no reconnect", answering{closed: true}, nil, nil, "", 0},
	} {
		reopened = 0
		res := &Result{}
		readBack(context.Background(), tc.q, tc.reopen, res)
		if !reflect.DeepEqual(res.Spent, tc.wantSpent) || res.Mechanism != tc.wantMech || reopened != tc.wantReopen {
			t.Errorf("%s: spent %v, mechanism %q, %d reconnections; want %v, %q, %d", tc.name, res.Spent, res.Mechanism, reopened, tc.wantSpent, tc.wantMech, tc.wantReopen)
		}
	}
}
