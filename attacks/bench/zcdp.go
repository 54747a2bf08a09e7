package bench

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"countwall/attacks/demo"
)

// zcdpSetups are the firewalls the zCDP lines compare: laplace with its
// charges reserved, gaussian with each zCDP charge committed on its own
// (budget.reserve 1, as every gaussian charge was before rho could be
// reserved), and gaussian with rho reserved as laplace's epsilon is.
var zcdpSetups = []struct {
	label, mechanism string
	reserve          int
}{
	{"laplace, reserved", "laplace", 100},
	{"gaussian, each charge alone", "gaussian", 1},
	{"gaussian, rho reserved", "gaussian", 100},
}

// zcdpClients are the concurrent sessions of one analyst the zCDP lines
// run: one, and as many as the attacks' --parallel 32.
var zcdpClients = []int{1, 32}

// benchZCDP prints the wire statements a second of gaussian against
// laplace, one analyst's sessions at once, each line the median of the
// bench's rounds with laplace's rate over it. The firewalls run side by
// side and take their rounds in turn, so that a change in the machine's
// load falls on all of them alike.
func (b *mechanismBench) benchZCDP(ctx context.Context, rounds, perRound int) error {
	srvs := make([]*demo.Firewall, len(zcdpSetups))
	for i, s := range zcdpSetups {
		setting := demo.Setting{Label: "zcdp " + s.mechanism + fmt.Sprint(s.reserve), Mechanism: s.mechanism, AuditSync: string(b.auditSync)}
		setting.Budget = maps.Clone(benchBudget)
		setting.Budget["reserve"] = s.reserve
		srv, err := demo.StartFirewall(ctx, b.dir, b.dbPath, b.people, setting, []string{"bench"})
		if err != nil {
			return fmt.Errorf("%s: %w", s.label, err)
		}
		defer srv.Stop()
		srvs[i] = srv
	}
	for _, clients := range zcdpClients {
		rates := make([][]float64, len(srvs))
		for range rounds {
			for i, srv := range srvs {
				qps, err := benchThroughput(ctx, []*demo.Firewall{srv}, clients, max(1, perRound/clients))
				if err != nil {
					return fmt.Errorf("%s: %w", zcdpSetups[i].label, err)
				}
				rates[i] = append(rates[i], qps)
			}
		}
		laplace := median(rates[0])
		for i, s := range zcdpSetups {
			qps := median(rates[i])
			fmt.Fprintf(b.tw, "%s, %d wire client(s) at once\t%.0f statements/s\t%.2f× laplace (time)\n", s.label, clients, qps, laplace/qps)
		}
	}
	return nil
}

// median is the middle of rates.
func median(rates []float64) float64 {
	slices.Sort(rates)
	return rates[len(rates)/2]
}
