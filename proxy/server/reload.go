package server

import (
	"fmt"
	"log/slog"
	"reflect"

	"countwall/config"
)

// A reload swaps the engine's config (mechanism, tables, analysts, caps
// lowered, audit retention), but some settings are read once, when serve
// starts: the server section (the listener, TLS, limits and timeouts the
// wire server was built with), the risk monitor's, and the ledger's
// reservation size. A reload whose file changes one of them logs it at
// WARN, with what to do, against the config serve started with, so that
// every reload repeats it until a restart applies it.

// Unapplied is a setting a reload cannot change: its key, the value in
// force and the value in the file.
type Unapplied struct {
	Key             string
	InForce, InFile any
}

// unapplied lists the settings read at start that next changes.
func unapplied(started, next *config.Config) []Unapplied {
	out := changedKeys("server", started.Server, next.Server)
	out = append(out, changedKeys("monitor", started.Monitor, next.Monitor)...)
	if started.Budget.Reserve != next.Budget.Reserve {
		out = append(out, Unapplied{"budget.reserve", started.Budget.Reserve, next.Budget.Reserve})
	}
	return out
}

// changedKeys compares two values of a config section field by field, by
// their config keys (mapstructure tags), so that a field added to the
// section is compared without being listed here.
func changedKeys(section string, was, now any) []Unapplied {
	a, b := reflect.ValueOf(was), reflect.ValueOf(now)
	var out []Unapplied
	for i := range a.NumField() {
		f := a.Type().Field(i)
		if !f.IsExported() || reflect.DeepEqual(a.Field(i).Interface(), b.Field(i).Interface()) {
			continue
		}
		key := f.Tag.Get("mapstructure")
		if key == "" {
			key = f.Name
		}
		out = append(out, Unapplied{section + "." + key, a.Field(i).Interface(), b.Field(i).Interface()})
	}
	return out
}

// warnUnapplied logs each setting next changes that the reload leaves as
// serve started with it.
func warnUnapplied(logger *slog.Logger, started, next *config.Config) {
	for _, u := range unapplied(started, next) {
		logger.Warn("config change not applied: it is read when serve starts; restart countwall to apply it",
			"key", u.Key, "in_force", fmt.Sprint(u.InForce), "in_file", fmt.Sprint(u.InFile))
	}
}
