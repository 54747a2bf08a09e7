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

// Code is a PostgreSQL SQLSTATE: five characters, the first two its class.
// It is a type of its own so that a code and a message cannot be swapped
// (Errorf's first argument is a Code, its second a format string).
type Code string

// String returns the five characters of the code.
func (c Code) String() string { return string(c) }

// SQLSTATE codes, PostgreSQL's condition names in Go case.
const (
	SuccessfulCompletion         Code = "00000"
	FeatureNotSupported          Code = "0A000"
	InvalidParameterValue        Code = "22023"
	InvalidBinaryRepresentation  Code = "22P03"
	ActiveSQLTransaction         Code = "25001"
	NoActiveSQLTransaction       Code = "25P01"
	InFailedSQLTransaction       Code = "25P02"
	InvalidSavepoint             Code = "3B001"
	InvalidSchemaName            Code = "3F000"
	ReadOnlySQLTransaction       Code = "25006"
	InvalidSQLStatementName      Code = "26000"
	InvalidAuthorization         Code = "28000"
	InvalidPassword              Code = "28P01"
	InvalidCursorName            Code = "34000"
	DuplicateCursor              Code = "42P03"
	DuplicatePreparedStatement   Code = "42P05"
	SyntaxError                  Code = "42601"
	InsufficientPrivilege        Code = "42501"
	UndefinedTable               Code = "42P01"
	UndefinedColumn              Code = "42703"
	UndefinedObject              Code = "42704"
	DatatypeMismatch             Code = "42804"
	GroupingError                Code = "42803"
	TooManyConnections           Code = "53300"
	ConfigurationLimitExceeded   Code = "53400" // the privacy budget is spent
	ProgramLimitExceeded         Code = "54000"
	QueryCanceled                Code = "57014"
	AdminShutdown                Code = "57P01"
	IdleSessionTimeout           Code = "57P05"
	ProtocolViolation            Code = "08P01"
	ObjectNotInPrerequisiteState Code = "55000"
	InternalError                Code = "XX000"
	UndefinedFunction            Code = "42883"
	AmbiguousFunction            Code = "42725"
	IndeterminateDatatype        Code = "42P18"
	WrongObjectType              Code = "42809"
	InvalidColumnReference       Code = "42P10"
	UndefinedParameter           Code = "42P02"
	NameTooLong                  Code = "42622"
	DivisionByZero               Code = "22012"
	InvalidEscapeSequence        Code = "22025"
	CharacterNotInRepertoire     Code = "22021"
	NumericValueOutOfRange       Code = "22003"
	InvalidTextRepresentation    Code = "22P02"
	ArraySubscriptError          Code = "2202E"
)

// Error is a refusal the analyst can act on. Message names the construct or
// the identifier the analyst typed; it never contains a value read from the
// data.
type Error struct {
	Code    Code
	Message string
	Hint    string // optional
	// Detail is PostgreSQL's DETAIL where it gives one the analyst can
	// act on (what is wrong with an array literal); optional.
	Detail string
	// cause is what an internal error hides from the analyst and keeps for
	// the log (Internal); nil for every refusal.
	cause error
}

func (e *Error) Error() string { return e.Message }

// SQLState returns the PostgreSQL SQLSTATE of the error, as pgx's
// *pgconn.PgError does, so that one interface reads both.
func (e *Error) SQLState() string { return string(e.Code) }

// HintText is the hint, for front ends that show one beside the message.
func (e *Error) HintText() string { return e.Hint }

// Unwrap is the cause an internal error hides, for the log.
func (e *Error) Unwrap() error { return e.cause }

// Errorf builds an *Error with the given SQLSTATE.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithHint returns e with its hint set, for chaining after Errorf.
func (e *Error) WithHint(hint string) *Error {
	e.Hint = hint
	return e
}

// WithDetail returns e with its detail set, for chaining after Errorf.
func (e *Error) WithDetail(detail string) *Error {
	e.Detail = detail
	return e
}

// InternalMessage is all the analyst is told of an internal error.
const InternalMessage = "internal error; the administrator can find details in the log"

// Internal is the error an analyst sees in place of cause (an I/O error, a
// bug): InternalError with a generic message, so that no internal detail or
// data value leaks. The cause is kept for the log (errors.Unwrap).
func Internal(cause error) *Error {
	return &Error{Code: InternalError, Message: InternalMessage, cause: cause}
}

// IsInternal reports whether e hides a cause (it was made by Internal).
func (e *Error) IsInternal() bool { return e.cause != nil }

// SQLState is the SQLSTATE carried by err or anything it wraps (an *Error,
// a pgx *pgconn.PgError, or any error with a SQLState method), or "" when
// none does.
func SQLState(err error) Code {
	var st interface{ SQLState() string }
	if errors.As(err, &st) {
		return Code(st.SQLState())
	}
	return ""
}

// Public is err as a front end may send it: the *Error it carries, or
// Internal(err) when it carries none. nil stays nil.
func Public(err error) *Error {
	if err == nil {
		return nil
	}
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	return Internal(err)
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
