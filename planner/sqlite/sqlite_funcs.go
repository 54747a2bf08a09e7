package sqlite

import (
	"countwall/planner/plan"
	"database/sql/driver"
	"fmt"
	"sync"

	"modernc.org/sqlite"
)

// sqlGroupText is the body of countwall_group_text.
func sqlGroupText(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("%s takes 1 argument, got %d", plan.GroupTextFunc, len(args))
	}
	s, ok := plan.GroupText(args[0])
	if !ok {
		return nil, nil
	}
	return s, nil
}

var (
	registerRecordKey sync.Once
	registerErr       error
)

// ensureRecordKeyFunc registers countwall_record_key with the SQLite driver
// once per process; connections opened afterwards can call it.
func ensureRecordKeyFunc() error {
	registerRecordKey.Do(func() {
		registerErr = sqlite.RegisterDeterministicScalarFunction(plan.RecordKeyFunc, 2, sqlRecordKey)
		if registerErr != nil {
			registerErr = fmt.Errorf("planner: registering %s with SQLite: %w", plan.RecordKeyFunc, registerErr)
			return
		}
		registerErr = sqlite.RegisterDeterministicScalarFunction(plan.CellRankFunc, -1, sqlCellRank)
		if registerErr != nil {
			registerErr = fmt.Errorf("planner: registering %s with SQLite: %w", plan.CellRankFunc, registerErr)
			return
		}
		registerErr = sqlite.RegisterDeterministicScalarFunction(plan.GroupTextFunc, 1, sqlGroupText)
		if registerErr != nil {
			registerErr = fmt.Errorf("planner: registering %s with SQLite: %w", plan.GroupTextFunc, registerErr)
			return
		}
		registerErr = sqlite.RegisterDeterministicScalarFunction(plan.RoundHalfEvenFunc, 1, sqlRoundHalfEven)
		if registerErr != nil {
			registerErr = fmt.Errorf("planner: registering %s with SQLite: %w", plan.RoundHalfEvenFunc, registerErr)
		}
	})
	return registerErr
}

// sqlRecordKey is the body of countwall_record_key. A NULL unit yields NULL so
// that SUM skips it, just as COUNT(DISTINCT unit) does.
func sqlRecordKey(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	if len(args) != 2 {
		return nil, fmt.Errorf("%s takes 2 arguments, got %d", plan.RecordKeyFunc, len(args))
	}
	secret, ok := args[0].([]byte)
	if !ok {
		return nil, fmt.Errorf("%s: the secret must be a blob", plan.RecordKeyFunc)
	}
	if args[1] == nil {
		return nil, nil
	}
	return int64(plan.RecordKey(secret, args[1])), nil
}

// sqlRoundHalfEven is the body of countwall_round_half_even. SQLite checks
// the argument count when it prepares the statement; any value gives a
// result (NULL for one that is not a number), never an error.
func sqlRoundHalfEven(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("%s takes 1 argument, got %d", plan.RoundHalfEvenFunc, len(args))
	}
	if r, ok := plan.RoundHalfEven(args[0]); ok {
		return r, nil
	}
	return nil, nil
}

// sqlCellRank is the body of countwall_cell_rank.
func sqlCellRank(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	if len(args) < 2 {
		return nil, fmt.Errorf("%s takes a secret and a unit, got %d arguments", plan.CellRankFunc, len(args))
	}
	secret, ok := args[0].([]byte)
	if !ok {
		return nil, fmt.Errorf("%s: the secret must be a blob", plan.CellRankFunc)
	}
	return plan.CellRankValues(secret, args[1], args[2:]), nil
}
