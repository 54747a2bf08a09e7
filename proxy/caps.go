package proxy

import (
	"context"
	"strings"

	"countwall/config"
	"countwall/proxy/state"
)

// warnUnraisedCaps logs, at WARN, each cap cfg raises that the ledger
// holds lower: a reload or a restart never raises a budget (Reload), which
// an owner who edited the file cannot otherwise tell, so each line says
// what is in force and gives the grant that adds the difference.
func (e *Engine) warnUnraisedCaps(ctx context.Context, cfg *config.Config) {
	unraised, err := e.budget.Unraised(ctx, cfg)
	if err != nil {
		e.logger.Warn("could not compare the config's budget caps with those held", "err", err)
		return
	}
	for _, u := range unraised {
		kinds := make([]string, len(u.Kinds))
		for i, k := range u.Kinds {
			kinds[i] = string(k)
		}
		attrs := []any{"analyst", u.Analyst, "kinds", strings.Join(kinds, ","),
			"epsilon_cap_in_config", state.FormatFigure(u.Configured.Epsilon), "epsilon_cap_held", state.FormatFigure(u.Held.Epsilon)}
		if u.Configured.Delta > u.Held.Delta {
			attrs = append(attrs, "delta_cap_in_config", state.FormatFigure(u.Configured.Delta), "delta_cap_held", state.FormatFigure(u.Held.Delta))
		}
		attrs = append(attrs, "to_raise", u.Grants(cfg.Path))
		e.logger.Warn("budget cap raised in the config is not applied: a reload or restart never raises a cap; grant the difference", attrs...)
	}
}
