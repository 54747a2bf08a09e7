// The ledger is the privacy budget, in one place: the accounting kinds
// it keeps, each analyst's Balance, the Caps and what remains, the notice
// an answer's charge gives, and the durable ledger itself. Every charge for
// an answered query is committed to the state database before the answer
// leaves, each analyst's spending is held to hard caps, and concurrent
// sessions (in one process or several) cannot overspend together. The
// Engine charges through a Budget (budget.go), which takes the caps from the
// config; `countwall budget` lists, grants and resets through the Ledger.
//
// Accounting kinds are kept apart: dp, idp and bdp each have their own
// totals, caps and grants, since an IDP or BDP claim is not a DP charge.
//
// Speed may come from reservation (LedgerOptions.Reserve > 1): one durable write
// reserves several queries' worth of budget, epsilon and delta or zCDP rho,
// which this process then spends in memory (ledger_reserve.go). A
// reservation counts as spent from the moment it is written, so a crash can
// only make the ledger show more spent than was answered, never less; the
// unused part is given back when the reservation is settled (exhausted, or
// at Close). The history of what was charged is written as runs, one row per
// reservation settled (ledger_history.go).

package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"countwall/ir"
	"countwall/pgerror"
)

// Entry is one answered query's charge.
type Entry struct {
	Analyst   string
	Mechanism string
	Kind      ir.Accounting
	Epsilon   float64
	Delta     float64
	// Fingerprint identifies the SQL text, never the text itself. The
	// history keeps it only for a charge committed on its own; the answer's
	// audit row keeps it always.
	Fingerprint string
	// Rho is a zCDP charge (the gaussian mechanism's): rho is summed per
	// analyst and kind, and the sum converted to epsilon at the delta the
	// cap leaves (ZCDPEpsilon) before it is held to the cap.
	Rho float64
}

// Caps are an analyst's total epsilon and delta for one accounting kind,
// before grants. Use NoCap for no limit: a zero cap allows nothing.
type Caps struct {
	Epsilon float64
	Delta   float64
}

// NoCap is an explicit "no limit" for a Caps field.
var NoCap = math.Inf(1)

// Unlimited is Caps with no limit on epsilon or delta.
func Unlimited() Caps { return Caps{Epsilon: NoCap, Delta: NoCap} }

// Balance is an analyst's standing in one accounting kind.
type Balance struct {
	Analyst string
	Kind    ir.Accounting
	// EpsilonSpent and DeltaSpent are what answered queries cost, plus any
	// reservation another process holds or a crash left unused (those count
	// as spent).
	EpsilonSpent float64
	DeltaSpent   float64
	// RhoSpent is the sum of the zCDP charges. It is already folded into
	// EpsilonSpent (as ZCDPEpsilon(RhoSpent, RhoDelta)) and DeltaSpent (as
	// RhoDelta, the part of the delta cap the conversion uses: all of what
	// the pure charges leave).
	RhoSpent float64
	RhoDelta float64
	// EpsilonReserved, DeltaReserved and RhoReserved are this process's
	// reserved but not yet used budget; they are not part of Spent.
	EpsilonReserved float64
	DeltaReserved   float64
	RhoReserved     float64
	// EpsilonGranted and DeltaGranted are extra budget given with Grant.
	EpsilonGranted float64
	DeltaGranted   float64
	// EpsilonCap and DeltaCap are the caps plus the grants: +Inf when
	// unlimited, NaN when the caller gave no caps (List without a lookup).
	EpsilonCap float64
	DeltaCap   float64
}

// EpsilonRemaining is what may still be spent: never negative, and 0 once
// what is left is within the cap's rounding tolerance (fits), where no
// charge is accepted any more.
func (b Balance) EpsilonRemaining() float64 { return remaining(b.EpsilonSpent, b.EpsilonCap) }

// DeltaRemaining is what may still be spent, as EpsilonRemaining.
func (b Balance) DeltaRemaining() float64 { return remaining(b.DeltaSpent, b.DeltaCap) }

// remaining is limit - spent, 0 within the rounding tolerance of limit.
func remaining(spent, limit float64) float64 {
	if math.IsInf(limit, 1) || math.IsNaN(limit) {
		return limit
	}
	if left := limit - spent; left > capTolerance*limit {
		return left
	}
	return 0
}

// Kinds are the accounting kinds the ledger keeps, in display order.
var Kinds = []ir.Accounting{ir.AccountingDP, ir.AccountingIDP, ir.AccountingBDP}

// LedgerOptions configure a Ledger.
type LedgerOptions struct {
	// Reserve is how many queries' worth of budget one durable write may
	// reserve; 0 or 1 commits every charge on its own.
	Reserve int
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

// capTolerance is the rounding a running sum of charges may carry: the
// sum is kept in binary floating point, where ten charges of 0.1 come to
// 0.9999999999999999 and one more rounding step could put a sum that meets
// its cap exactly a part in 10^16 above it. A charge is accepted when the
// sum after it is within one part in 10^9 of the cap (far above that
// rounding, over millions of charges, and far below any share an analyst
// may SET), and once what is left is within that tolerance it counts as
// nothing (remaining): no charge is accepted any more. So ten charges of
// 0.1 fit a cap of 1 and leave 0, and the sum charged never passes the cap
// by more than the tolerance, which is rounding, not budget.
const capTolerance = 1e-9

// Ledger is the budget ledger over the state database. It is safe for
// concurrent use.
type Ledger struct {
	db      *sql.DB
	reserve int
	now     func() time.Time

	mu       sync.Mutex
	analysts map[string]*analystState

	// capsOnce creates the held caps' table (caps.go).
	capsOnce sync.Once
	capsErr  error
}

// analystState serialises one analyst's charges in this process and holds
// its open reservations (one per kind).
type analystState struct {
	mu     sync.Mutex
	chunks map[ir.Accounting]*chunk
}

// OpenLedger creates the ledger's tables if needed. db must be a SQLite database
// in WAL mode with synchronous=FULL (as Open opens it), or a
// PostgreSQL database opened by openPostgres (dialect.go), so that a committed charge
// survives a crash or power loss.
func OpenLedger(ctx context.Context, db *sql.DB, opts LedgerOptions) (*Ledger, error) {
	if db == nil {
		return nil, errors.New("ledger: no state database")
	}
	if err := checkDurable(ctx, db); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	const schema = historySchema + `;
CREATE TABLE IF NOT EXISTS ledger_spent (
	analyst TEXT NOT NULL,
	kind    TEXT NOT NULL,
	epsilon REAL NOT NULL,
	delta   REAL NOT NULL,
	rho     REAL NOT NULL DEFAULT 0,
	PRIMARY KEY (analyst, kind)
);
CREATE TABLE IF NOT EXISTS ledger_reservations (
	id      INTEGER PRIMARY KEY,
	at      TEXT NOT NULL,
	analyst TEXT NOT NULL,
	kind    TEXT NOT NULL,
	epsilon REAL NOT NULL,
	delta   REAL NOT NULL,
	rho     REAL NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS ledger_grants (
	id      INTEGER PRIMARY KEY,
	at      TEXT NOT NULL,
	analyst TEXT NOT NULL,
	kind    TEXT NOT NULL,
	epsilon REAL NOT NULL,
	delta   REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS ledger_resets (
	id      INTEGER PRIMARY KEY,
	at      TEXT NOT NULL,
	analyst TEXT NOT NULL
);`
	if _, err := db.ExecContext(ctx, schema); err != nil {
		return nil, fmt.Errorf("ledger: creating tables: %w", err)
	}
	for _, table := range []string{"ledger_spent", "ledger_reservations"} {
		if err := addRhoColumn(ctx, db, table); err != nil {
			return nil, err
		}
	}
	l := &Ledger{db: db, reserve: max(opts.Reserve, 1), now: opts.Now, analysts: map[string]*analystState{}}
	if l.now == nil {
		l.now = time.Now
	}
	if err := l.migrateHistory(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *Ledger) analyst(name string) *analystState {
	l.mu.Lock()
	defer l.mu.Unlock()
	st, ok := l.analysts[name]
	if !ok {
		st = &analystState{chunks: map[ir.Accounting]*chunk{}}
		l.analysts[name] = st
	}
	return st
}

func validKind(k ir.Accounting) bool {
	for _, known := range Kinds {
		if k == known {
			return true
		}
	}
	return false
}

func validAmount(f float64) bool { return f >= 0 && !math.IsInf(f, 0) && !math.IsNaN(f) }

func (e Entry) validate() error {
	switch {
	case e.Analyst == "":
		return errors.New("ledger: charge without an analyst")
	case e.Kind != ir.AccountingNone && !validKind(e.Kind):
		return fmt.Errorf("ledger: unknown accounting kind %q", e.Kind)
	case !validAmount(e.Epsilon) || !validAmount(e.Delta) || !validAmount(e.Rho):
		return fmt.Errorf("ledger: charge of epsilon %g, delta %g, rho %g is not a finite non-negative amount", e.Epsilon, e.Delta, e.Rho)
	case e.Rho > 0 && e.Kind == ir.AccountingNone:
		return errors.New("ledger: a rho charge needs an accounting kind")
	}
	return nil
}

// fits reports whether spent+cost stays within limit (with capTolerance):
// a cost of 0 always does; any other needs something left (remaining).
func fits(spent, cost, limit float64) bool {
	if cost == 0 || math.IsInf(limit, 1) {
		return true
	}
	return remaining(spent, limit) > 0 && spent+cost <= limit+capTolerance*limit
}

// Charge records e durably before returning, or refuses it with a
// *pgerror.Error (SQLSTATE 53400) when it would take the analyst past caps
// plus grants for e.Kind; a refused entry is not charged. An entry with no
// accounting kind is recorded without a cap check.
func (l *Ledger) Charge(ctx context.Context, e Entry, caps Caps) (Balance, error) {
	if err := e.validate(); err != nil {
		return Balance{}, err
	}
	if math.IsNaN(caps.Epsilon) || math.IsNaN(caps.Delta) || caps.Epsilon < 0 || caps.Delta < 0 {
		return Balance{}, fmt.Errorf("ledger: caps epsilon %g, delta %g must be >= 0 (NoCap for no limit)", caps.Epsilon, caps.Delta)
	}
	st := l.analyst(e.Analyst)
	st.mu.Lock()
	defer st.mu.Unlock()
	if e.Kind == ir.AccountingNone || l.reserve <= 1 {
		return l.chargeDirect(ctx, e, caps)
	}
	if c := st.chunks[e.Kind]; c != nil {
		if bal, ok := l.spendReserved(c, e, caps); ok {
			return bal, nil
		}
	}
	return l.chargeReserving(ctx, st, e, caps)
}

// exhausted is the refusal for a charge over the cap.
func exhausted(e Entry, what string, spent, limit, cost float64) error {
	return &pgerror.Error{
		Code: pgerror.ConfigurationLimitExceeded,
		Message: fmt.Sprintf("privacy budget exhausted for analyst %q: %s %s spent %s of %s, this query needs %s",
			e.Analyst, e.Kind, what, FormatFigure(spent), FormatFigure(limit), FormatFigure(cost)),
		Hint: "Lower the per-query share with SET " + what + ", or ask the data owner for a grant (countwall budget grant).",
	}
}

// chargeDirect commits e on its own (no reservation is open when it is used).
func (l *Ledger) chargeDirect(ctx context.Context, e Entry, caps Caps) (Balance, error) {
	var bal Balance
	err := l.immediate(ctx, func(tx *sql.Conn) error {
		raw, err := l.readRaw(ctx, tx, e.Analyst, e.Kind, caps)
		if err != nil {
			return err
		}
		after, refusal := admit(raw, e, foldRho)
		if refusal != nil {
			return refusal
		}
		if err := writeHistory(ctx, tx, e.Analyst, e.Kind, appendCharge(nil, l.now(), e)); err != nil {
			return err
		}
		if e.Kind != ir.AccountingNone {
			if err := addSpent(ctx, tx, e.Analyst, e.Kind, e.Epsilon, e.Delta, e.Rho); err != nil {
				return err
			}
		}
		bal = after
		return nil
	})
	return bal, err
}

// addSpent adds to the kind's durable totals (a negative amount gives back).
func addSpent(ctx context.Context, tx *sql.Conn, analyst string, kind ir.Accounting, eps, delta, rho float64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO ledger_spent (analyst, kind, epsilon, delta, rho) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (analyst, kind) DO UPDATE SET epsilon = max(0, ledger_spent.epsilon + excluded.epsilon), delta = max(0, ledger_spent.delta + excluded.delta),
	rho = max(0, ledger_spent.rho + excluded.rho)`,
		analyst, string(kind), eps, delta, rho)
	if err != nil {
		return fmt.Errorf("ledger: updating spent total: %w", err)
	}
	return nil
}

// readRaw returns the durable balance with the pure and zCDP spending apart
// (RhoSpent not folded into EpsilonSpent and DeltaSpent).
func (l *Ledger) readRaw(ctx context.Context, q querier, analyst string, kind ir.Accounting, caps Caps) (Balance, error) {
	b := Balance{Analyst: analyst, Kind: kind}
	err := q.QueryRowContext(ctx, `SELECT
	coalesce((SELECT epsilon FROM ledger_spent WHERE analyst = ?1 AND kind = ?2), 0),
	coalesce((SELECT delta FROM ledger_spent WHERE analyst = ?1 AND kind = ?2), 0),
	coalesce((SELECT sum(epsilon) FROM ledger_grants WHERE analyst = ?1 AND kind = ?2), 0),
	coalesce((SELECT sum(delta) FROM ledger_grants WHERE analyst = ?1 AND kind = ?2), 0)`,
		analyst, string(kind)).Scan(&b.EpsilonSpent, &b.DeltaSpent, &b.EpsilonGranted, &b.DeltaGranted)
	if err != nil {
		return Balance{}, fmt.Errorf("ledger: reading balance: %w", err)
	}
	err = q.QueryRowContext(ctx, `SELECT coalesce((SELECT rho FROM ledger_spent WHERE analyst = ? AND kind = ?), 0)`,
		analyst, string(kind)).Scan(&b.RhoSpent)
	if err != nil {
		return Balance{}, fmt.Errorf("ledger: reading balance: %w", err)
	}
	b.EpsilonCap, b.DeltaCap = caps.Epsilon+b.EpsilonGranted, caps.Delta+b.DeltaGranted
	return b, nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// immediate runs fn in a BEGIN IMMEDIATE transaction on one connection: the
// write lock is taken before anything is read, so two processes checking
// the same analyst's cap are serialised. fn's error rolls back.
func (l *Ledger) immediate(ctx context.Context, fn func(tx *sql.Conn) error) error {
	conn, err := l.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return fmt.Errorf("ledger: starting transaction: %w", err)
	}
	if err := fn(conn); err != nil {
		// The rollback must run even when ctx is what failed.
		if _, rbErr := conn.ExecContext(context.Background(), "ROLLBACK"); rbErr != nil {
			return errors.Join(err, fmt.Errorf("ledger: rolling back: %w", rbErr))
		}
		return err
	}
	if _, err := conn.ExecContext(context.Background(), "COMMIT"); err != nil {
		conn.ExecContext(context.Background(), "ROLLBACK")
		return fmt.Errorf("ledger: committing: %w", err)
	}
	return nil
}
