package planner

import "fmt"

// SQLSTATE codes the planner and the engine use. They follow PostgreSQL's
// meanings so that clients react to them as they would to a real server.
const (
	CodeSyntax              = "42601" // syntax_error
	CodeFeatureNotSupported = "0A000" // feature_not_supported
	CodeUndefinedTable      = "42P01" // undefined_table
	CodeUndefinedColumn     = "42703" // undefined_column
	CodeInvalidParameter    = "22023" // invalid_parameter_value
	CodeDatatypeMismatch    = "42804" // datatype_mismatch
	CodeProgramLimit        = "54000" // program_limit_exceeded
	CodeInsufficientPriv    = "42501" // insufficient_privilege
	CodeGrouping            = "42803" // grouping_error
	CodeReadOnly            = "25006" // read_only_sql_transaction
	CodeQueryCanceled       = "57014" // query_canceled
	CodeInternal            = "XX000" // internal_error
	CodeUndefinedObject     = "42704" // undefined_object (unknown SET/SHOW name)
	CodeConfigLimit         = "53400" // configuration_limit_exceeded (budget exhausted)
)

// Error is a refusal the analyst can act on. Message names the construct or the
// identifier the analyst typed; it never contains a value read from the data.
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
