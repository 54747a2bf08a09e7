package report

import (
	"fmt"
	"io"
	"time"

	"countwall/attacks/audit"
)

// WriteHTMLCard writes the report card page to path, with the audit read
// from auditPath when one is given (and the audit risk runs of RiskFile
// beside it, when there), and tells w where the page is.
func WriteHTMLCard(w io.Writer, path string, rows []Row, auditPath string) error {
	page := Page{Rows: rows, Generated: time.Now()}
	if auditPath != "" {
		a, err := audit.ReadJSON(auditPath)
		if err != nil {
			return err
		}
		page.Audit = a
		if page.Risk, err = readRisk(auditPath); err != nil {
			return err
		}
	}
	if err := WriteHTMLFile(path, page); err != nil {
		return fmt.Errorf("writing the HTML report card: %w", err)
	}
	fmt.Fprintf(w, "The report card page is in %s.\n", path)
	return nil
}
