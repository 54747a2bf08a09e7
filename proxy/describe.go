package proxy

// Description is what a statement will return, known before it runs: the
// type of each bound parameter $1..$n and the output columns (nil for
// statements that return no rows, such as SET).
type Description struct {
	Params  []ColumnType
	Columns []Column
}
