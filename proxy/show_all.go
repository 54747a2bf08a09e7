package proxy

import (
	"sort"
	"strconv"
	"strings"
)

// settingInfo is what SHOW ALL says of a setting: the name as PostgreSQL
// spells it and PostgreSQL 15's description (countwall's own for its
// settings).
type settingInfo struct {
	name, description string
}

var settingInfos = map[string]settingInfo{
	"application_name":                    {"application_name", "Sets the application name to be reported in statistics and logs."},
	"bytea_output":                        {"bytea_output", "Sets the output format for bytea."},
	"client_encoding":                     {"client_encoding", "Sets the client's character set encoding."},
	"client_min_messages":                 {"client_min_messages", "Sets the message levels that are sent to the client."},
	"datestyle":                           {"DateStyle", "Sets the display format for date and time values."},
	"default_transaction_isolation":       {"default_transaction_isolation", "Sets the transaction isolation level of each new transaction."},
	"extra_float_digits":                  {"extra_float_digits", "Sets the number of digits displayed for floating-point values."},
	"idle_in_transaction_session_timeout": {"idle_in_transaction_session_timeout", "Sets the maximum allowed idle time between queries, when in a transaction."},
	"integer_datetimes":                   {"integer_datetimes", "Shows whether datetimes are integer based."},
	"intervalstyle":                       {"IntervalStyle", "Sets the display format for interval values."},
	"lc_messages":                         {"lc_messages", "Sets the language in which messages are displayed."},
	"lock_timeout":                        {"lock_timeout", "Sets the maximum allowed duration of any wait for a lock."},
	"max_identifier_length":               {"max_identifier_length", "Shows the maximum identifier length."},
	"search_path":                         {"search_path", "Sets the schema search order for names that are not schema-qualified."},
	"server_encoding":                     {"server_encoding", "Shows the server (database) character set encoding."},
	"server_version":                      {"server_version", "Shows the server version."},
	"server_version_num":                  {"server_version_num", "Shows the server version as an integer."},
	"standard_conforming_strings":         {"standard_conforming_strings", "Causes '...' strings to treat backslashes literally."},
	"statement_timeout":                   {"statement_timeout", "Sets the maximum allowed duration of any statement."},
	"timezone":                            {"TimeZone", "Sets the time zone for displaying and interpreting time stamps."},
	"transaction_isolation":               {"transaction_isolation", "Sets the current transaction's isolation level."},
	"epsilon":                             {"epsilon", "Sets the epsilon each answer of this session spends (countwall)."},
	"delta":                               {"delta", "Sets the delta each answer of this session spends (countwall)."},
	confidenceSetting:                     {confidenceSetting, "Sets the confidence of the interval given with each count, or off (countwall)."},
}

// displayName is a setting's name as PostgreSQL spells it (DateStyle), the
// column name of SHOW.
func displayName(name string) string {
	if info, ok := settingInfos[name]; ok {
		return info.name
	}
	return name
}

// showAll answers SHOW ALL: each setting countwall has, its value in this
// session and its description, ordered by name as PostgreSQL orders them.
func (s *Session) showAll(rt *runtime) *Result {
	res := &Result{Columns: []Column{{Name: "name", Type: ColumnText}, {Name: "setting", Type: ColumnText},
		{Name: "description", Type: ColumnText}}, Tag: "SHOW"}
	names := make([]string, 0, len(settingInfos))
	for name := range settingInfos {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool {
		return strings.ToLower(displayName(names[i])) < strings.ToLower(displayName(names[j]))
	})
	eps, delta := s.share(rt)
	for _, name := range names {
		var v string
		switch name {
		case "epsilon":
			v = strconv.FormatFloat(eps, 'g', -1, 64)
		case "delta":
			v = strconv.FormatFloat(delta, 'g', -1, 64)
		case confidenceSetting:
			v = s.confidenceText()
		case "server_version":
			v = ServerVersion
		case "server_version_num":
			v = ServerVersionNum
		default:
			v = s.clientSetting(name)
		}
		info := settingInfos[name]
		res.Rows = append(res.Rows, []Value{{Text: info.name}, {Text: v}, {Text: info.description}})
		res.Suppressed = append(res.Suppressed, false)
	}
	return res
}

// clientSetting is a client setting's value in this session.
func (s *Session) clientSetting(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, set := s.settings[name]; set {
		return v
	}
	if v, set := s.defaults[name]; set {
		return v
	}
	return clientSettings[name]
}
