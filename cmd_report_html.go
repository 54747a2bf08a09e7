package main

import (
	"fmt"
	"io"
	"time"

	"countwall/attacks/audit"
	"countwall/attacks/report"
)

// writeHTMLCard writes the report card page, with the audit read from
// auditPath when one is given.
func writeHTMLCard(w io.Writer, path string, rows []report.Row, auditPath string) error {
	page := report.Page{Rows: rows, Generated: time.Now()}
	if auditPath != "" {
		a, err := audit.ReadJSON(auditPath)
		if err != nil {
			return err
		}
		page.Audit = a
	}
	if err := report.WriteHTMLFile(path, page); err != nil {
		return fmt.Errorf("writing the HTML report card: %w", err)
	}
	fmt.Fprintf(w, "The report card page is in %s.\n", path)
	return nil
}
