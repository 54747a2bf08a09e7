package dataset

import (
	"context"
	"database/sql"
	"fmt"
)

// NeighbourOptions size the pair of neighbouring tables an audit measures a
// mechanism on.
type NeighbourOptions struct {
	// Rows is the size of the table without the target person (at least
	// CellRows+1).
	Rows int64
	// CellRows is how many other people share the target's cell (grp 't').
	CellRows int64
}

// NeighboursTable describes the audit table: one row per person, the cell
// they fall in and a flag set for the audited person alone, so that a
// count over the cell and a count over the flag both differ between the
// two neighbours by exactly that person.
func NeighboursTable() Table {
	return Table{Name: "people", PrivacyUnit: "id", Columns: []Column{
		{Name: "id", Type: TypeInteger, Doc: "the person"},
		{Name: "grp", Type: TypeText, Categories: []string{"t", "u", "v", "w"}, Doc: "the cell: the audited person is in t"},
		{Name: "flag", Type: TypeInteger, HasRange: true, Min: 0, Max: 1, Doc: "1 for the audited person alone"},
	}}
}

// WriteNeighbours writes two databases that differ in one person: without
// holds o.Rows people, CellRows of them in cell t; with holds the same people
// and the audited person, id Rows+1, in cell t with flag 1.
func WriteNeighbours(ctx context.Context, without, with string, o NeighbourOptions, w WriteOptions) error {
	if o.CellRows < 0 || o.Rows <= o.CellRows {
		return fmt.Errorf("neighbours: need more rows (%d) than people in the target's cell (%d)", o.Rows, o.CellRows)
	}
	for _, p := range []struct {
		path   string
		target bool
	}{{without, false}, {with, true}} {
		total := o.Rows
		if p.target {
			total++
		}
		t := NeighboursTable()
		defs := []string{"id INTEGER PRIMARY KEY", "grp TEXT NOT NULL", "flag INTEGER NOT NULL"}
		others := t.Columns[1].Categories[1:]
		var i int64
		err := buildNewFile(ctx, p.path, w.Force, generatedFileMode, func(ctx context.Context, db *sql.DB) error {
			return createAndFill(ctx, db, t, defs, total, w.Progress, func(row []any) error {
				i++
				row[0], row[2] = i, int64(0)
				switch {
				case i > o.Rows: // the audited person
					row[1], row[2] = "t", int64(1)
				case i <= o.CellRows:
					row[1] = "t"
				default:
					row[1] = others[int(i)%len(others)]
				}
				return nil
			})
		})
		if err != nil {
			return fmt.Errorf("writing %s: %w", p.path, err)
		}
	}
	return nil
}
