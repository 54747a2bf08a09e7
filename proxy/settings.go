package proxy

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"countwall/ir"
	"countwall/mechanisms"
	"countwall/pgerror"
	"countwall/proxy/state"
)

// clientSettings are the parameters drivers SET on connect. They are accepted
// and echoed by SHOW; none of them changes what is answered.
var clientSettings = map[string]string{
	"application_name":                    "",
	"extra_float_digits":                  "1",
	"datestyle":                           "ISO, MDY",
	"client_encoding":                     "UTF8",
	"timezone":                            "UTC",
	"search_path":                         "public",
	"statement_timeout":                   "0",
	"intervalstyle":                       "postgres",
	"client_min_messages":                 "notice",
	"standard_conforming_strings":         "on",
	"bytea_output":                        "hex",
	"lc_messages":                         "C",
	"default_transaction_isolation":       "read committed",
	"transaction_isolation":               "read committed",
	"idle_in_transaction_session_timeout": "0",
	"lock_timeout":                        "0",
	"server_encoding":                     "UTF8",
	"integer_datetimes":                   "on",
	"max_identifier_length":               "63",
}

// share is the session's per-query budget share.
func (s *Session) share(rt *runtime) (eps, delta float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	eps, delta = rt.cfg.Budget.Epsilon.Default, rt.cfg.Budget.Delta.Default
	if s.epsilon > 0 {
		eps = s.epsilon
	}
	if s.hasDelta {
		delta = s.delta
	}
	return eps, delta
}

func (s *Session) set(rt *runtime, st *ir.Set) (*Result, error) {
	if st.Reset {
		return s.reset(st.Name)
	}
	done := &Result{Tag: "SET"}
	switch st.Name {
	case "epsilon", "delta":
		r := rt.cfg.Budget.Epsilon
		if st.Name == "delta" {
			r = rt.cfg.Budget.Delta
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(st.Value), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, pgerror.Errorf(pgerror.InvalidParameterValue, "SET %s needs a number", st.Name)
		}
		if v < r.Min || v > r.Max {
			return nil, &pgerror.Error{Code: pgerror.InvalidParameterValue,
				Message: fmt.Sprintf("%s %g is outside the allowed range [%g, %g]", st.Name, v, r.Min, r.Max)}
		}
		// A share the mechanism cannot use is refused here, not at every
		// query that would then be refused.
		eps, delta := s.share(rt)
		if st.Name == "epsilon" {
			eps = v
		} else {
			delta = v
		}
		if err := mechanisms.CheckShare(rt.mech, eps, delta); err != nil {
			return nil, &pgerror.Error{Code: pgerror.InvalidParameterValue,
				Message: fmt.Sprintf("SET %s = %g: %s", st.Name, v, err.Error()),
				Hint:    fmt.Sprintf("The %s mechanism cannot use this share; choose one it can use within the config's range [%g, %g].", rt.mech.Name(), r.Min, r.Max)}
		}
		s.mu.Lock()
		if st.Name == "epsilon" {
			s.epsilon = v
		} else {
			s.delta, s.hasDelta = v, true
		}
		s.mu.Unlock()
		return done, nil
	}
	if st.Name == confidenceSetting {
		return s.setConfidence(st.Value)
	}
	if _, ok := clientSettings[st.Name]; ok {
		v, err := clientValue(st.Name, st.Value, false)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.settings[st.Name] = v
		s.mu.Unlock()
		return done, nil
	}
	return nil, &pgerror.Error{Code: pgerror.UndefinedObject,
		Message: fmt.Sprintf("unrecognized configuration parameter %q", st.Name),
		Hint:    "countwall accepts SET epsilon and SET delta, and the usual client settings"}
}

// clientValue is the value a client setting takes when set to v, in a SET
// or (atStartup) in the startup packet, or the error refusing v.
func clientValue(name, v string, atStartup bool) (string, error) {
	switch name {
	case "standard_conforming_strings":
		if !settingIsOn(v) {
			// The lexer always reads strings with it on; accepting off would
			// let a client that escapes a quote as \' believe it is safe.
			return "", &pgerror.Error{Code: pgerror.FeatureNotSupported,
				Message: fmt.Sprintf("standard_conforming_strings cannot be set to %q: countwall reads every string with it on", v),
				Hint:    "Escape a quote in a string by doubling it ('it''s')."}
		}
	case "client_encoding":
		return ClientEncoding(v, atStartup)
	}
	return v, nil
}

// readOnlySettings are the client settings that report the server, which
// a startup packet does not set.
var readOnlySettings = map[string]bool{"server_encoding": true, "integer_datetimes": true, "max_identifier_length": true}

// StartupSettings are the client settings a startup packet's parameters
// carry (application_name=psql, DateStyle=ISO), by lower-cased name: the
// session's values until a SET, and the ones RESET and DISCARD ALL return
// to, as PostgreSQL keeps them. A value SET would refuse is refused; the
// other parameters (user, database, options) are not settings.
func StartupSettings(params map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for name, v := range params {
		name = strings.ToLower(name)
		if _, ok := clientSettings[name]; !ok || readOnlySettings[name] {
			continue
		}
		v, err := clientValue(name, v, true)
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

// UseStartupSettings makes the settings StartupSettings read the session's
// defaults.
func (s *Session) UseStartupSettings(defaults map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.defaults = defaults
}

// reset returns a setting to its default (RESET name), or every one (RESET
// ALL): the share to the config's default, a client setting to its value
// at connection (the startup packet's, else countwall's default).
func (s *Session) reset(name string) (*Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch _, client := clientSettings[name]; {
	case name == "all":
		s.settings = map[string]string{}
		s.epsilon, s.delta, s.hasDelta = 0, 0, false
	case name == "epsilon":
		s.epsilon = 0
	case name == "delta":
		s.delta, s.hasDelta = 0, false
	case client || name == confidenceSetting:
		delete(s.settings, name)
	default:
		return nil, pgerror.Errorf(pgerror.UndefinedObject, "unrecognized configuration parameter %q", name)
	}
	return &Result{Tag: "RESET"}, nil
}

// settingIsOn reads a boolean setting's value as PostgreSQL does.
func settingIsOn(v string) bool {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(v), `'"`)) {
	case "on", "true", "yes", "1", "t", "y":
		return true
	}
	return false
}

func showColumns(name string) []Column {
	if name == "budget" {
		return []Column{
			{Name: "kind", Type: ColumnText},
			{Name: "epsilon_spent", Type: ColumnFloat8}, {Name: "epsilon_remaining", Type: ColumnFloat8},
			{Name: "delta_spent", Type: ColumnFloat8}, {Name: "delta_remaining", Type: ColumnFloat8},
			{Name: "rho_spent", Type: ColumnFloat8},
		}
	}
	return []Column{{Name: displayName(name), Type: ColumnText}}
}

func (s *Session) show(ctx context.Context, rt *runtime, st *ir.Show) (*Result, error) {
	one := func(v string) *Result {
		return &Result{Columns: showColumns(st.Name), Rows: [][]Value{{{Text: v}}}, Suppressed: []bool{false}, Tag: "SHOW"}
	}
	switch st.Name {
	case "all":
		return s.showAll(rt), nil
	case "budget":
		bals, err := s.engine.budget.Balances(ctx, s.analyst)
		if err != nil {
			return nil, err
		}
		res := &Result{Columns: showColumns("budget"), Tag: "SHOW"}
		for _, b := range bals {
			// Rounded as every budget figure shown (state.Figure): 1, not
			// 0.9999999999999999 after ten charges of 0.1.
			res.Rows = append(res.Rows, []Value{{Text: string(b.Kind)},
				{Float: state.Figure(b.EpsilonSpent)}, {Float: state.Figure(b.EpsilonRemaining())},
				{Float: state.Figure(b.DeltaSpent)}, {Float: state.Figure(b.DeltaRemaining())}, {Float: state.Figure(b.RhoSpent)}})
			res.Suppressed = append(res.Suppressed, false)
		}
		return res, nil
	case "epsilon", "delta":
		eps, delta := s.share(rt)
		if st.Name == "epsilon" {
			return one(strconv.FormatFloat(eps, 'g', -1, 64)), nil
		}
		return one(strconv.FormatFloat(delta, 'g', -1, 64)), nil
	case "mechanism":
		return showMechanism(rt, s), nil
	case confidenceSetting:
		return one(s.confidenceText()), nil
	case "server_version":
		return one(ServerVersion), nil
	case "server_version_num":
		return one(ServerVersionNum), nil
	}
	if _, ok := clientSettings[st.Name]; ok {
		return one(s.clientSetting(st.Name)), nil
	}
	return nil, pgerror.Errorf(pgerror.UndefinedObject, "unrecognized configuration parameter %q", st.Name)
}

func (s *Session) chatter(st *ir.Chatter) (*Result, error) {
	switch st.Kind {
	case ir.ChatterVersion:
		return &Result{Columns: []Column{{Name: "version", Type: ColumnText}},
			Rows: [][]Value{{{Text: "PostgreSQL " + ServerVersion}}}, Suppressed: []bool{false}, Tag: "SELECT 1"}, nil
	case ir.ChatterCurrentSetting:
		_, ok := clientSettings[st.Value]
		var v string
		switch st.Value {
		case "server_version":
			v, ok = ServerVersion, true
		case "server_version_num":
			v, ok = ServerVersionNum, true
		default:
			v = s.clientSetting(st.Value)
		}
		if !ok {
			return nil, pgerror.Errorf(pgerror.UndefinedObject, "unrecognized configuration parameter %q", st.Value)
		}
		return &Result{Columns: []Column{{Name: "current_setting", Type: ColumnText}},
			Rows: [][]Value{{{Text: v}}}, Suppressed: []bool{false}, Tag: "SELECT 1"}, nil
	case ir.ChatterBegin:
		return &Result{Tag: "BEGIN"}, nil
	case ir.ChatterCommit:
		return &Result{Tag: "COMMIT"}, nil
	case ir.ChatterRollback:
		return &Result{Tag: "ROLLBACK"}, nil
	case ir.ChatterDiscard:
		// PLANS, SEQUENCES and TEMP have nothing to drop here: countwall
		// caches no plans and has no sequences or temporary tables.
		if st.Value == "all" {
			s.mu.Lock()
			s.settings = map[string]string{}
			s.epsilon, s.delta, s.hasDelta = 0, 0, false
			s.mu.Unlock()
		}
		return &Result{Tag: "DISCARD " + strings.ToUpper(st.Value)}, nil
	case ir.ChatterSavepoint:
		return &Result{Tag: "SAVEPOINT"}, nil
	case ir.ChatterRelease:
		return &Result{Tag: "RELEASE"}, nil
	case ir.ChatterRollbackTo:
		return &Result{Tag: "ROLLBACK"}, nil
	case ir.ChatterFetch, ir.ChatterMove, ir.ChatterClose, ir.ChatterExecute:
		// The front end answers them from the cursors it keeps.
		return &Result{Tag: strings.ToUpper(string(st.Kind))}, nil
	case ir.ChatterDeallocate:
		if st.Value == "" {
			return &Result{Tag: "DEALLOCATE ALL"}, nil
		}
		return &Result{Tag: "DEALLOCATE"}, nil
	case ir.ChatterEmpty:
		return &Result{}, nil
	}
	return nil, pgerror.Errorf(pgerror.FeatureNotSupported, "statement is not supported")
}

// Settings are a session's settings at one moment: what a transaction's
// rollback restores, as PostgreSQL rolls back a SET made in a transaction
// that fails or is rolled back.
type Settings struct {
	epsilon, delta float64
	hasDelta       bool
	values         map[string]string
}

// Reverted is s with the named settings as they are in to: a SET LOCAL's
// settings at the end of its transaction.
func (s Settings) Reverted(names []string, to Settings) Settings {
	out := Settings{epsilon: s.epsilon, delta: s.delta, hasDelta: s.hasDelta, values: make(map[string]string, len(s.values))}
	for k, v := range s.values {
		out.values[k] = v
	}
	for _, name := range names {
		switch name {
		case "epsilon":
			out.epsilon = to.epsilon
		case "delta":
			out.delta, out.hasDelta = to.delta, to.hasDelta
		default:
			if v, ok := to.values[name]; ok {
				out.values[name] = v
			} else {
				delete(out.values, name)
			}
		}
	}
	return out
}

// Settings returns the session's settings now.
func (s *Session) Settings() Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	values := make(map[string]string, len(s.settings))
	for k, v := range s.settings {
		values[k] = v
	}
	return Settings{epsilon: s.epsilon, delta: s.delta, hasDelta: s.hasDelta, values: values}
}

// Setting is the value the session SET name to (name lower-cased); false
// when it keeps its default.
func (s *Session) Setting(name string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.settings[name]
	return v, ok
}

// RestoreSettings returns the session's settings to saved ones.
func (s *Session) RestoreSettings(saved Settings) {
	values := make(map[string]string, len(saved.values))
	for k, v := range saved.values {
		values[k] = v
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epsilon, s.delta, s.hasDelta, s.settings = saved.epsilon, saved.delta, saved.hasDelta, values
}
