// Package metrics exposes a running firewall's operation to Prometheus:
// statements by kind, outcome and SQLSTATE, answer latency, open sessions,
// pending logins, budget spent per analyst and accounting kind, and the
// state of each table's in-memory snapshot.
//
// No metric carries a data value: labels are statement kinds, SQLSTATEs,
// analyst names and table names from the config, accounting kinds and
// snapshot states; values are counts of statements and connections,
// latencies and budget spent. Never a statement's text, an answer, a row
// count or a table's size.
package metrics

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"countwall/pgerror"
	"countwall/proxy/state/release"
)

// Spent is one analyst's spending of one accounting kind.
type Spent struct {
	Analyst, Kind       string
	Epsilon, Delta, Rho float64
}

// Engine is what the metrics read from the engine at each scrape.
type Engine interface {
	OpenSessions() int
	BudgetSpent(ctx context.Context) ([]Spent, error)
	// SnapshotStates maps each table to none, loading, memory or sqlite.
	SnapshotStates() map[string]string
}

// Logins is what the metrics read from the wire server at each scrape.
type Logins interface {
	PendingLogins() int
	EvictedLogins() uint64
}

// SnapshotStateNames are the states a table's snapshot can be in.
var SnapshotStateNames = []string{"none", "loading", "memory", "sqlite"}

// Metrics holds the firewall's collectors.
type Metrics struct {
	registry   *prometheus.Registry
	statements *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	// The risk monitor's last decision per analyst: counts of what the
	// answers already released determine, never a value.
	riskFindings    *prometheus.GaugeVec
	riskIndividuals *prometheus.GaugeVec
	suspended       *prometheus.GaugeVec
}

// New registers the collectors, reading sessions, budgets and snapshots
// from engine and logins from logins (nil when there is no wire server).
func New(engine Engine, logins Logins) *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		statements: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "countwall_statements_total",
			Help: "Statements received, by kind (query, set, show, chatter, catalog, invalid), outcome (answered or refused) and SQLSTATE (00000 when answered).",
		}, []string{"kind", "outcome", "sqlstate"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "countwall_answer_duration_seconds",
			Help:    "Time from receiving a statement to its answer, for answered statements, by kind.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10), // 100us .. 26s
		}, []string{"kind"}),
		riskFindings: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "countwall_risk_findings",
			Help: "Counts the analyst's released answers determine exactly or within the stated error, at the risk monitor's last check (monitor.every).",
		}, []string{"analyst"}),
		riskIndividuals: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "countwall_risk_individuals",
			Help: "Of countwall_risk_findings, those about one person.",
		}, []string{"analyst"}),
		suspended: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "countwall_analyst_suspended",
			Help: "1 when the risk monitor has suspended the analyst (monitor.suspend), else 0.",
		}, []string{"analyst"}),
	}
	m.registry.MustRegister(m.statements, m.latency, m.riskFindings, m.riskIndividuals, m.suspended,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "countwall_sessions_open",
			Help: "Analyst sessions open (authenticated wire connections and in-process sessions).",
		}, func() float64 { return float64(engine.OpenSessions()) }),
		&budgetCollector{engine: engine},
		&snapshotCollector{engine: engine},
	)
	if logins != nil {
		m.registry.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "countwall_logins_pending",
				Help: "Connections accepted that have not finished startup and authentication.",
			}, func() float64 { return float64(logins.PendingLogins()) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "countwall_logins_evicted_total",
				Help: "Pending connections closed to make room for new ones (server.max_pending_auth).",
			}, func() float64 { return float64(logins.EvictedLogins()) }),
		)
	}
	return m
}

// Statement records one statement: its kind, its SQLSTATE ("" when it was
// answered) and how long it took.
func (m *Metrics) Statement(kind release.Kind, code pgerror.Code, took time.Duration) {
	outcome := release.OutcomeRefused
	if code == "" {
		outcome, code = release.OutcomeAnswered, pgerror.SuccessfulCompletion
		m.latency.WithLabelValues(kind.String()).Observe(took.Seconds())
	}
	m.statements.WithLabelValues(kind.String(), outcome.String(), code.String()).Inc()
}

// Risk records the risk monitor's decision about one analyst.
func (m *Metrics) Risk(analyst string, findings, individuals int, suspended bool) {
	m.riskFindings.WithLabelValues(analyst).Set(float64(findings))
	m.riskIndividuals.WithLabelValues(analyst).Set(float64(individuals))
	v := 0.0
	if suspended {
		v = 1
	}
	m.suspended.WithLabelValues(analyst).Set(v)
}

// Handler serves the exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// Registry is the registry the collectors are in (for tests and embedding).
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

var budgetDesc = prometheus.NewDesc("countwall_budget_spent",
	"Budget spent per analyst and accounting kind (dp, idp, bdp), in epsilon, delta and zCDP rho, as SHOW budget reports it.",
	[]string{"analyst", "kind", "unit"}, nil)

// budgetCollector reads the ledger at each scrape.
type budgetCollector struct{ engine Engine }

func (c *budgetCollector) Describe(ch chan<- *prometheus.Desc) { ch <- budgetDesc }

func (c *budgetCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	spent, err := c.engine.BudgetSpent(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(budgetDesc, err)
		return
	}
	for _, s := range spent {
		for _, v := range []struct {
			unit  string
			value float64
		}{{"epsilon", s.Epsilon}, {"delta", s.Delta}, {"rho", s.Rho}} {
			ch <- prometheus.MustNewConstMetric(budgetDesc, prometheus.GaugeValue, v.value, s.Analyst, s.Kind, v.unit)
		}
	}
}

var snapshotDesc = prometheus.NewDesc("countwall_snapshot_state",
	"1 for the state each table's in-memory snapshot is in: none (not read yet), loading (being read), memory (answering from memory) or sqlite (left to SQLite).",
	[]string{"table", "state"}, nil)

// snapshotCollector reports each table's snapshot state.
type snapshotCollector struct{ engine Engine }

func (c *snapshotCollector) Describe(ch chan<- *prometheus.Desc) { ch <- snapshotDesc }

func (c *snapshotCollector) Collect(ch chan<- prometheus.Metric) {
	for table, state := range c.engine.SnapshotStates() {
		for _, s := range SnapshotStateNames {
			v := 0.0
			if s == state {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(snapshotDesc, prometheus.GaugeValue, v, table, s)
		}
	}
}
