package attacks

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// Reach says how a run reached the firewall, so that a report card can say
// per run what ran: over the PostgreSQL wire protocol or in process, the
// server and the config where they are known, and the table attacked.
type Reach struct {
	// Transport is TransportWire or TransportInProcess.
	Transport string `json:"transport"`
	// Server is a wire run's host:port/database, never its user or password.
	Server string `json:"server,omitempty"`
	// Config is the config file the firewall ran, absolute; empty when the
	// run could not know it (a wire run given only a DSN).
	Config string `json:"config,omitempty"`
	Table  string `json:"table"`
}

// How a run reached the firewall.
const (
	TransportWire      = "wire"
	TransportInProcess = "in process"
)

// WireReach is the Reach of a run over the wire to dsn, a postgres:// URL or
// key=value string; config is the firewall's config file when known.
func WireReach(dsn, config, table string) *Reach {
	r := &Reach{Transport: TransportWire, Config: absPath(config), Table: table}
	if cfg, err := pgx.ParseConfig(dsn); err == nil {
		r.Server = net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))) + "/" + cfg.Database
	}
	return r
}

// InProcessReach is the Reach of a run in process through the config file
// at config.
func InProcessReach(config, table string) *Reach {
	return &Reach{Transport: TransportInProcess, Config: absPath(config), Table: table}
}

// String says it in a few words: "wire 127.0.0.1:5433/countwall, table
// people" or "in process, config c.yaml, table people".
func (r *Reach) String() string {
	if r == nil {
		return "not recorded"
	}
	s := r.Transport
	if r.Server != "" {
		s += " " + r.Server
	}
	if r.Config != "" {
		s += ", config " + filepath.Base(r.Config)
	}
	return s + fmt.Sprintf(", table %s", r.Table)
}

func absPath(p string) string {
	if p == "" {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}
