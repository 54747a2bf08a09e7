package admin

import (
	"countwall/config"
	"countwall/proxy/risk"
)

// RiskDomains are the config's declared domains (tables.T.domains), by
// table and column, as the risk solvers read them: closed at their ends.
func RiskDomains(cfg *config.Config) map[string]map[string]risk.Domain {
	out := map[string]map[string]risk.Domain{}
	for name, t := range cfg.Tables {
		ds := map[string]risk.Domain{}
		for col, d := range t.Domains {
			if d.IsRange {
				ds[col] = risk.Domain{Min: d.Min, Max: d.Max}
			} else if len(d.Categories) > 0 {
				ds[col] = risk.Domain{Categories: d.Categories}
			}
		}
		out[name] = ds
	}
	return out
}
