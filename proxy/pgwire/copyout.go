package pgwire

import (
	"bytes"
	"strconv"

	"github.com/jackc/pgx/v5/pgproto3"

	"countwall/ir"
	"countwall/pgerror"
	"countwall/proxy"
)

// sendCopy sends an answer as COPY ... TO STDOUT sends it: CopyOutResponse,
// one CopyData a line (a header of the column names first when asked),
// CopyDone and the tag COPY n, then the answer's notice. Values are their
// text form, as the text protocol sends them; a NULL (a withheld count
// among them) is \N in the text format and an empty unquoted field in CSV.
func (c *conn) sendCopy(res *proxy.Result, out ir.CopyOut) bool {
	if len(res.Columns) == 0 {
		c.sendError(pgerror.Errorf(pgerror.FeatureNotSupported, "COPY needs a query that returns rows"))
		return false
	}
	c.be.Send(&pgproto3.CopyOutResponse{OverallFormat: 0, ColumnFormatCodes: make([]uint16, len(res.Columns))})
	var line bytes.Buffer
	if out.Header {
		for i, col := range res.Columns {
			writeCopyField(&line, i, col.Name, false, out.CSV)
		}
		c.sendCopyLine(&line)
	}
	for _, row := range res.Rows {
		values := c.enc.dataRow(res.Columns, row, nil).Values
		for i, v := range values {
			writeCopyField(&line, i, string(v), v == nil, out.CSV)
		}
		c.sendCopyLine(&line)
	}
	c.be.Send(&pgproto3.CopyDone{})
	c.be.Send(c.enc.commandComplete("COPY " + strconv.Itoa(len(res.Rows))))
	if res.Notice != "" {
		c.sendNotice(res.Notice)
	}
	return true
}

// sendCopyLine sends the line built so far and empties the buffer.
func (c *conn) sendCopyLine(line *bytes.Buffer) {
	line.WriteByte('\n')
	c.be.Send(&pgproto3.CopyData{Data: bytes.Clone(line.Bytes())})
	line.Reset()
}

// writeCopyField writes the i-th field of a line in COPY's text format
// (tab-separated, backslash escapes, \N for NULL) or CSV (comma-separated,
// quoted where a comma, a quote, a line break or a leading/trailing space
// would misread, NULL as nothing).
func writeCopyField(b *bytes.Buffer, i int, v string, null, csv bool) {
	switch {
	case i > 0 && csv:
		b.WriteByte(',')
	case i > 0:
		b.WriteByte('\t')
	}
	switch {
	case null && csv:
	case null:
		b.WriteString(`\N`)
	case csv:
		if v == "" || bytes.ContainsAny([]byte(v), ",\"\r\n") || v[0] == ' ' || v[len(v)-1] == ' ' || v == `\.` {
			b.WriteByte('"')
			for _, r := range []byte(v) {
				if r == '"' {
					b.WriteByte('"')
				}
				b.WriteByte(r)
			}
			b.WriteByte('"')
			return
		}
		b.WriteString(v)
	default:
		for _, r := range []byte(v) {
			switch r {
			case '\\':
				b.WriteString(`\\`)
			case '\t':
				b.WriteString(`\t`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			default:
				b.WriteByte(r)
			}
		}
	}
}
