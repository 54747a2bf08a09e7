package sqlite_test

import (
	"context"
	"database/sql"
	"reflect"
	"testing"

	"countwall/planner/internal/fixture"
	"countwall/planner/plan"
)

// TestRegisteredFunctions: the SQL functions the rendered SQL calls answer
// in SQLite exactly as their Go bodies in planner/plan do, NULL where a
// value has none, and a wrong call is an error, not a value.
func TestRegisteredFunctions(t *testing.T) {
	s, _ := openPeople(t, plan.StoreOptions{})
	secret := fixture.Secret
	for _, tc := range []struct {
		name string
		sql  string
		args []any
		want any // nil for SQL NULL
	}{
		{"record key of an integer", `SELECT countwall_record_key(?, 42)`, []any{secret}, int64(plan.RecordKey(secret, int64(42)))},
		{"record key of a text", `SELECT countwall_record_key(?, 'alice')`, []any{secret}, int64(plan.RecordKey(secret, "alice"))},
		{"record key of NULL", `SELECT countwall_record_key(?, NULL)`, []any{secret}, nil},
		{"cell rank", `SELECT countwall_cell_rank(?, 7, 'F', 30)`, []any{secret}, plan.CellRank(secret, int64(7), "F", int64(30))},
		{"cell rank of an integral real", `SELECT countwall_cell_rank(?, 7, 1e15)`, []any{secret}, plan.CellRank(secret, int64(7), int64(1e15))},
		{"group text of a real", `SELECT countwall_group_text(1.0)`, nil, "1"},
		{"group text of a blob", `SELECT countwall_group_text(x'4e')`, nil, "N"},
		{"group text of NULL", `SELECT countwall_group_text(NULL)`, nil, nil},
		{"round half to even", `SELECT countwall_round_half_even(2.5)`, nil, 2.0},
		{"round an integer", `SELECT countwall_round_half_even(-7)`, nil, -7.0},
		{"round a text", `SELECT countwall_round_half_even('2.5')`, nil, nil},
	} {
		var got any
		if err := s.DB().QueryRowContext(context.Background(), tc.sql, tc.args...).Scan(&got); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %#v, want %#v", tc.name, got, tc.want)
		}
	}
	for _, bad := range []string{
		`SELECT countwall_record_key('not a blob', 1)`,
		`SELECT countwall_cell_rank('not a blob', 1)`,
		`SELECT countwall_cell_rank(x'00')`,
		`SELECT countwall_round_half_even(1, 2)`,
	} {
		var v sql.NullString
		if err := s.DB().QueryRowContext(context.Background(), bad).Scan(&v); err == nil {
			t.Errorf("%s: %v, want an error", bad, v)
		}
	}
}
