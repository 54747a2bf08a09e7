package proxy

import (
	"countwall/ir"
	"countwall/planner"
)

// EndsTransaction reports whether sql is COMMIT or ROLLBACK (or their
// spellings END and ABORT): the statements a front door still runs in a
// failed transaction block, as PostgreSQL does. It parses the statement but
// runs nothing and records nothing.
func (s *Session) EndsTransaction(sql string) bool {
	stmt, err := planner.Parse(sql, nil, s.engine.live.Load().catalog)
	if err != nil {
		return false
	}
	c, ok := stmt.(*ir.Chatter)
	return ok && (c.Kind == "commit" || c.Kind == "rollback")
}
