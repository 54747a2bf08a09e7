// Package pgerror is the one place for the SQLSTATE codes countwall answers
// with and the error type that carries them. It is a leaf: every layer (the
// planner, the mechanisms, the ledger, the Engine, the wire and the attacks)
// imports it, and it imports nothing of the project.
//
// The codes follow PostgreSQL's meanings (Appendix A of its manual) so that
// clients react to them as they would to a real server; the constant names
// are PostgreSQL's condition names in Go case.
package pgerror

import (
	"errors"
	"fmt"
)

// SQLSTATE codes, PostgreSQL's condition names in Go case.
const (
	SuccessfulCompletion        = "00000"
	FeatureNotSupported         = "0A000"
	InvalidParameterValue       = "22023"
	InvalidBinaryRepresentation = "22P03"
	ActiveSQLTransaction        = "25001"
	NoActiveSQLTransaction      = "25P01"
	InFailedSQLTransaction      = "25P02"
	ReadOnlySQLTransaction      = "25006"
	InvalidSQLStatementName     = "26000"
	InvalidAuthorization        = "28000"
	InvalidPassword             = "28P01"
	InvalidCursorName           = "34000"
	DuplicateCursor             = "42P03"
	DuplicatePreparedStatement  = "42P05"
	SyntaxError                 = "42601"
	InsufficientPrivilege       = "42501"
	UndefinedTable              = "42P01"
	UndefinedColumn             = "42703"
	UndefinedObject             = "42704"
	DatatypeMismatch            = "42804"
	GroupingError               = "42803"
	TooManyConnections          = "53300"
	ConfigurationLimitExceeded  = "53400" // the privacy budget is spent
	ProgramLimitExceeded        = "54000"
	QueryCanceled               = "57014"
	AdminShutdown               = "57P01"
	IdleSessionTimeout          = "57P05"
	ProtocolViolation           = "08P01"
	InternalError               = "XX000"
	UndefinedFunction           = "42883"
	DivisionByZero              = "22012"
	InvalidEscapeSequence       = "22025"
	CharacterNotInRepertoire    = "22021"
	NumericValueOutOfRange      = "22003"
	InvalidTextRepresentation   = "22P02"
)

// Error is a refusal the analyst can act on. Message names the construct or
// the identifier the analyst typed; it never contains a value read from the
// data.
type Error struct {
	Code    string // PostgreSQL SQLSTATE
	Message string
	Hint    string // optional
}

func (e *Error) Error() string { return e.Message }

// SQLState returns the PostgreSQL SQLSTATE of the error.
func (e *Error) SQLState() string { return e.Code }

// HintText is the hint, for front ends that show one beside the message.
func (e *Error) HintText() string { return e.Hint }

// Errorf builds an *Error with the given SQLSTATE.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithHint returns e with its hint set, for chaining after Errorf.
func (e *Error) WithHint(hint string) *Error {
	e.Hint = hint
	return e
}

// SQLState is the SQLSTATE carried by err or anything it wraps (an *Error,
// a pgx *pgconn.PgError, or any error with a SQLState method), or "" when
// none does.
func SQLState(err error) string {
	var st interface{ SQLState() string }
	if errors.As(err, &st) {
		return st.SQLState()
	}
	return ""
}

// AsPSQL renders err as psql prints a server error: "ERROR code: message",
// with a HINT line when the error carries one. An error without a SQLSTATE
// is returned as it is.
func AsPSQL(err error) error {
	var pe *Error
	if errors.As(err, &pe) && pe.Hint != "" {
		return fmt.Errorf("ERROR %s: %s\nHINT: %s", pe.Code, pe.Message, pe.Hint)
	}
	if st, ok := err.(interface{ SQLState() string }); ok {
		return fmt.Errorf("ERROR %s: %s", st.SQLState(), err.Error())
	}
	return err
}
