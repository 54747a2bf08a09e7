package pgwire

import (
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"
)

// reportedSettings are the settings a session may SET among those
// PostgreSQL reports to the client whenever they change (GUC_REPORT):
// drivers and pools track them from ParameterStatus, not by asking.
// client_encoding is reported too, but only UTF8 is accepted, so it never
// changes.
var reportedSettings = []string{"application_name", "DateStyle", "IntervalStyle", "TimeZone"}

// reportSettings sends a ParameterStatus for each reported setting whose
// value differs from what the client was last told, as PostgreSQL 14 and
// later do before ReadyForQuery: after a SET, and after a RESET, a
// DISCARD ALL or a rollback that undid one. A setting the session does
// not set has the value the client was told at startup.
func (c *conn) reportSettings() {
	if c.session == nil {
		return
	}
	for _, name := range reportedSettings {
		v, set := c.session.Setting(strings.ToLower(name))
		if !set {
			v = c.startupReported[name]
		}
		if v != c.reported[name] {
			c.reported[name] = v
			c.be.Send(&pgproto3.ParameterStatus{Name: name, Value: v})
		}
	}
}
