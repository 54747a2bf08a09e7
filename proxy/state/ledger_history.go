package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"countwall/ir"
)

// The ledger's history: what was charged, kept apart from the running
// totals (ledger_spent) that the caps are checked against. Each answer's
// audit row already holds its own charge and fingerprint, so the history
// does not repeat them statement by statement: one row stands for a run of
// charges of one analyst, kind and mechanism settled together (the charges
// spent from one reservation, or a single charge committed on its own),
// with their number, the sums of epsilon, delta and rho, and the times of
// the first and the last. A row of one charge keeps that charge's
// fingerprint. The history is never read to check a cap; it is the owner's
// record, and it survives audit retention.

const historySchema = `
CREATE TABLE IF NOT EXISTS ledger (
	id          INTEGER PRIMARY KEY,
	first_at    BIGINT NOT NULL,
	last_at     BIGINT NOT NULL,
	analyst     TEXT NOT NULL,
	mechanism   TEXT NOT NULL,
	kind        TEXT NOT NULL,
	charges     BIGINT NOT NULL,
	epsilon     REAL NOT NULL,
	delta       REAL NOT NULL,
	rho         REAL NOT NULL,
	fingerprint TEXT
)`

const insertHistory = `INSERT INTO ledger (first_at, last_at, analyst, mechanism, kind, charges, epsilon, delta, rho, fingerprint)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// chargeRun is consecutive charges of one analyst and kind by one
// mechanism, not yet written: one row of the history.
type chargeRun struct {
	first, last         time.Time
	mechanism           string
	charges             int64
	epsilon, delta, rho float64
	fingerprint         string // the one charge's, while charges == 1
}

// appendCharge adds e, charged at at, to the last run when its mechanism is
// the same (a reload may change the mechanism within a reservation), or
// starts a new run.
func appendCharge(runs []chargeRun, at time.Time, e Entry) []chargeRun {
	if n := len(runs); n > 0 && runs[n-1].mechanism == e.Mechanism {
		r := &runs[n-1]
		r.last = at
		r.charges++
		r.epsilon += e.Epsilon
		r.delta += e.Delta
		r.rho += e.Rho
		r.fingerprint = ""
		return runs
	}
	return append(runs, chargeRun{first: at, last: at, mechanism: e.Mechanism, charges: 1,
		epsilon: e.Epsilon, delta: e.Delta, rho: e.Rho, fingerprint: e.Fingerprint})
}

// used is what runs cost together.
func used(runs []chargeRun) (eps, delta, rho float64) {
	for _, r := range runs {
		eps += r.epsilon
		delta += r.delta
		rho += r.rho
	}
	return eps, delta, rho
}

// writeHistory records runs of the analyst's charges of kind, one row each.
func writeHistory(ctx context.Context, tx *sql.Conn, analyst string, kind ir.Accounting, runs []chargeRun) error {
	for _, r := range runs {
		var fp any
		if r.charges == 1 && r.fingerprint != "" {
			fp = r.fingerprint
		}
		if _, err := tx.ExecContext(ctx, insertHistory, r.first.UnixMicro(), r.last.UnixMicro(), analyst, r.mechanism,
			string(kind), r.charges, r.epsilon, r.delta, r.rho, fp); err != nil {
			return fmt.Errorf("ledger: recording charges: %w", err)
		}
	}
	return nil
}

// migrationGroup is how many charges of an earlier state file's history,
// one row each there, one row of the history summarises at most.
const migrationGroup = 1000

// migrateHistory rewrites the history of a state file written by an earlier
// version, one row per charge with its time as text, into runs: the charges
// of one analyst, mechanism and kind among migrationGroup consecutive rows
// become one row. The sums, counts and each run's first and last time are
// kept; the fingerprint only where a run is one charge (each answer's
// audit row keeps its own). The running totals are not touched. It runs in
// one transaction under the ledger's lock, checking again inside it, so
// that two processes opening the same PostgreSQL state migrate it once.
func (l *Ledger) migrateHistory(ctx context.Context) error {
	pg := isPostgres(l.db)
	if old, err := columnExistsOn(ctx, l.db, pg, "ledger", "at"); err != nil || !old {
		return err
	}
	if err := addRhoColumn(ctx, l.db, "ledger"); err != nil {
		return err
	}
	err := l.immediate(ctx, func(tx *sql.Conn) error {
		if old, err := columnExistsOn(ctx, tx, pg, "ledger", "at"); err != nil || !old {
			return err
		}
		for _, stmt := range []string{`ALTER TABLE ledger RENAME TO ledger_before_runs`, historySchema} {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		runs, err := oldRuns(ctx, tx)
		if err != nil {
			return err
		}
		for _, r := range runs {
			if err := writeHistory(ctx, tx, r.analyst, r.kind, []chargeRun{r.chargeRun}); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `DROP TABLE ledger_before_runs`)
		return err
	})
	if err != nil {
		return fmt.Errorf("ledger: moving the charges of an earlier version into runs: %w", err)
	}
	return nil
}

// oldRun is one run read from an earlier version's history.
type oldRun struct {
	chargeRun
	analyst         string
	kind            ir.Accounting
	firstID, lastID int64
}

// oldRuns groups the rows of ledger_before_runs into runs, in the order
// they were written, with the first and last charge's times.
func oldRuns(ctx context.Context, tx *sql.Conn) ([]oldRun, error) {
	rows, err := tx.QueryContext(ctx, `SELECT analyst, mechanism, kind, min(id), max(id), count(*),
	sum(epsilon), sum(delta), sum(rho), CASE WHEN count(*) = 1 THEN min(fingerprint) END
FROM ledger_before_runs GROUP BY analyst, mechanism, kind, id / ? ORDER BY min(id)`, migrationGroup)
	if err != nil {
		return nil, err
	}
	var runs []oldRun
	for rows.Next() {
		var r oldRun
		var kind string
		var fp sql.NullString
		if err := rows.Scan(&r.analyst, &r.mechanism, &kind, &r.firstID, &r.lastID, &r.charges,
			&r.epsilon, &r.delta, &r.rho, &fp); err != nil {
			rows.Close()
			return nil, err
		}
		r.kind, r.fingerprint = ir.Accounting(kind), fp.String
		runs = append(runs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range runs {
		r := &runs[i]
		if r.first, err = oldChargeTime(ctx, tx, r.firstID); err != nil {
			return nil, err
		}
		if r.last, err = oldChargeTime(ctx, tx, r.lastID); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// oldChargeTime reads the time of one charge of an earlier version's history.
func oldChargeTime(ctx context.Context, tx *sql.Conn, id int64) (time.Time, error) {
	var at string
	if err := tx.QueryRowContext(ctx, `SELECT at FROM ledger_before_runs WHERE id = ?`, id).Scan(&at); err != nil {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return time.Time{}, errors.New("a charge's time is not an RFC 3339 time")
	}
	return t, nil
}
