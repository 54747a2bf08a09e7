package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"countwall/proxy/risk"
)

// writeReportsJSON writes reports to path as json.MarshalIndent(reports,
// "", "  ") would, byte for byte, one finding at a time: a whole
// reconstruction's findings run to hundreds of megabytes of JSON, which
// marshalled at once (and indented into a second copy) would outweigh
// the findings themselves.
func writeReportsJSON(path string, reports []risk.Report) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	err = encodeReports(w, reports)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// findingsHole is where a report marshalled without its findings holds
// them. It cannot occur inside a JSON string, whose quotes are escaped.
var findingsHole = []byte(`"findings": []`)

// encodeReports writes reports to w, indented as MarshalIndent does.
func encodeReports(w io.Writer, reports []risk.Report) error {
	if len(reports) == 0 {
		b, err := json.MarshalIndent(reports, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	if _, err := io.WriteString(w, "[\n"); err != nil {
		return err
	}
	for i, r := range reports {
		if err := encodeReport(w, r); err != nil {
			return err
		}
		sep := ",\n"
		if i == len(reports)-1 {
			sep = "\n]"
		}
		if _, err := io.WriteString(w, sep); err != nil {
			return err
		}
	}
	return nil
}

// encodeReport writes one report of the list, its findings one by one.
func encodeReport(w io.Writer, r risk.Report) error {
	fs := r.Findings
	if len(fs) > 0 {
		r.Findings = []risk.Finding{}
	}
	head, err := json.MarshalIndent(r, "  ", "  ")
	if err != nil {
		return err
	}
	at := bytes.Index(head, findingsHole)
	if len(fs) == 0 || at < 0 {
		_, err = io.WriteString(w, "  ")
		if err == nil {
			_, err = w.Write(head)
		}
		return err
	}
	at += len(findingsHole) - 1 // before the closing bracket
	if _, err := io.WriteString(w, "  "); err != nil {
		return err
	}
	if _, err := w.Write(head[:at]); err != nil {
		return err
	}
	for i := range fs {
		b, err := json.MarshalIndent(&fs[i], "      ", "  ")
		if err != nil {
			return err
		}
		sep := ",\n      "
		if i == 0 {
			sep = "\n      "
		}
		if _, err := io.WriteString(w, sep); err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	if _, err := io.WriteString(w, "\n    "); err != nil {
		return err
	}
	_, err = w.Write(head[at:])
	return err
}
