package state

import (
	"context"
	"fmt"
	"os"
	"time"

	"countwall/proxy/state/release"
)

// AuditEntry is one statement's outcome. A refusal holds no data values:
// its SQL text is kept only as a keyed fingerprint, and its reason is the
// refusal message, which never contains values read from the database. An
// answered query also holds what left the firewall: its statement (shape
// and constants) and the cells released; its row stores no fingerprint, so
// Fingerprint reads back empty for it.
type AuditEntry struct {
	ID          int64 // the row's id, when read back
	At          time.Time
	Analyst     string
	Fingerprint string
	Kind        release.Kind
	Mechanism   string
	Outcome     release.Outcome
	SQLState    string // "" when answered
	Reason      string
	// ChargeKind, Epsilon, Delta and Rho are what an answer cost ("" and 0
	// when nothing was charged); Rho is a zCDP charge (gaussian).
	ChargeKind string
	Epsilon    float64
	Delta      float64
	Rho        float64
	// Shape, Constants, Query and Cells are an answered query's statement,
	// its structured record and the released cells (release.Release has
	// their meaning).
	Shape     string
	Constants []release.Constant
	Query     *release.Query
	Cells     []release.Cell

	done chan error // closed-over result of the commit, for a caller who waits
}

// Outcomes of an audited statement, as the entries of this package spell
// them.
const (
	OutcomeAnswered = release.OutcomeAnswered
	OutcomeRefused  = release.OutcomeRefused
)

// Audit queues an entry for the audit log without waiting for it to be
// written; it writes the pending entries itself only when many are waiting,
// so entries are never dropped. Use it for refusals, which send nothing out.
func (s *DB) Audit(e AuditEntry) {
	n, err := s.enqueue(e, true)
	if err != nil {
		return // after Close there is nowhere to write; nothing was answered
	}
	if n >= maxPending {
		s.commitPending()
	}
}

// AuditDurable writes an entry and returns once its transaction is
// committed (as durably as Options.AuditSync says): call it before an answer
// leaves, so that the audit never shows fewer answers than clients received.
// Entries offered while a commit is in progress share the next one (group
// commit).
func (s *DB) AuditDurable(ctx context.Context, e AuditEntry) error {
	return s.AuditLater(e).Wait(ctx)
}

// PendingAudit is an entry queued by AuditLater, whose commit its holder
// waits for before the answer leaves.
type PendingAudit struct {
	s    *DB
	done chan error
	err  error // the entry could not be queued
}

// AuditLater queues an answer's entry and returns at once: AuditDurable in
// two halves, for a front end that holds the answer until Wait returns
// (the wire holds a connection's pipelined answers and waits once, so that
// their entries share one commit).
func (s *DB) AuditLater(e AuditEntry) PendingAudit {
	e.done = make(chan error, 1)
	if _, err := s.enqueue(e, false); err != nil {
		return PendingAudit{err: err}
	}
	return PendingAudit{s: s, done: e.done}
}

// Wait, called once, returns when the entry is committed (as durably as
// Options.AuditSync says), with the commit's error. Either an earlier
// writer commits it with its batch, or this goroutine becomes the writer
// and commits every pending entry.
func (p PendingAudit) Wait(ctx context.Context) error {
	if p.err != nil || p.done == nil {
		return p.err
	}
	s := p.s
	select {
	case err := <-p.done:
		return err
	case s.writing <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-p.done: // written while this goroutine took its turn
		<-s.writing
		return err
	default:
	}
	s.commitLocked()
	<-s.writing
	return <-p.done
}

// enqueue adds an entry to the pending ones and says how many are pending;
// wake asks the flusher to write them soon. The flusher is woken under
// pendingMu, so never after Close has closed its channel.
func (s *DB) enqueue(e AuditEntry, wake bool) (int, error) {
	if e.At.IsZero() {
		e.At = time.Now()
	}
	s.pendingMu.Lock()
	defer s.pendingMu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	s.pending = append(s.pending, e)
	if wake && len(s.pending) < maxPending {
		select {
		case s.kick <- struct{}{}:
		default: // the flusher is already awake
		}
	}
	return len(s.pending), nil
}

// Flush waits until every entry queued so far is written.
func (s *DB) Flush() {
	s.commitPending()
}

// commitPending writes every pending entry in one transaction and tells
// those who wait how it went.
func (s *DB) commitPending() {
	s.writing <- struct{}{}
	defer func() { <-s.writing }()
	s.commitLocked()
}

// commitLocked is commitPending for the holder of the writing turn.
func (s *DB) commitLocked() {
	s.pendingMu.Lock()
	batch := s.pending
	s.pending, s.written = s.written, nil
	s.pendingMu.Unlock()
	if len(batch) == 0 {
		s.written = batch
		return
	}
	// The batch's slice is the next one's, emptied so that it keeps no
	// statement alive: a busy server's batches are then not grown anew.
	defer func() {
		if cap(batch) <= maxPending {
			clear(batch)
			s.written = batch[:0]
		}
	}()
	err := s.writeAudit(batch)
	if err != nil {
		fmt.Fprintln(os.Stderr, "countwall: audit log write failed:", err)
	}
	for _, e := range batch {
		if e.done != nil {
			e.done <- err
		}
	}
}

// flusher writes refusals' entries soon after they are queued, until Close.
func (s *DB) flusher() {
	defer close(s.flusherOK)
	for range s.kick {
		s.commitPending()
	}
}
