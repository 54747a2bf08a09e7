package demo

import (
	"bytes"
	"fmt"
	"os"

	"go.yaml.in/yaml/v3"

	"countwall/config"
	"countwall/dataset"
)

// configFile is the part of a countwall config the demo writes. The files
// stay in the work directory, so that a firewall the demo leaves behind
// (--dir) runs again as it ran.
type configFile struct {
	Database   string                       `yaml:"database"`
	State      string                       `yaml:"state"`
	Audit      auditSection                 `yaml:"audit,omitempty"`
	Mechanism  mechanismName                `yaml:"mechanism"`
	Mechanisms map[string]map[string]any    `yaml:"mechanisms,omitempty"`
	Budget     map[string]any               `yaml:"budget"`
	Analysts   map[string]map[string]string `yaml:"analysts"`
	Tables     map[string]any               `yaml:"tables"`
}

type auditSection struct {
	Sync string `yaml:"sync,omitempty"`
}

type mechanismName struct {
	Name string `yaml:"name"`
}

// mechanismParams is the config's mechanisms section for one mechanism's
// parameters, nil when it runs on its defaults.
func mechanismParams(mechanism string, params map[string]any) map[string]map[string]any {
	if len(params) == 0 {
		return nil
	}
	return map[string]map[string]any{mechanism: params}
}

// writeConfig writes f as YAML to path and loads it as the firewall will.
func writeConfig(path string, f configFile) (*config.Config, error) {
	var body bytes.Buffer
	enc := yaml.NewEncoder(&body)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		return nil, fmt.Errorf("writing the config %s: %w", path, err)
	}
	if err := os.WriteFile(path, body.Bytes(), 0o600); err != nil {
		return nil, err
	}
	return config.Load(path, nil)
}

// tables is the config's tables section for t, as dataset describes it.
func tables(t dataset.Table) (map[string]any, error) {
	var doc struct {
		Tables map[string]any `yaml:"tables"`
	}
	if err := yaml.Unmarshal([]byte(t.ConfigSnippet()), &doc); err != nil {
		return nil, fmt.Errorf("reading the %s table's config snippet: %w", t.Name, err)
	}
	return doc.Tables, nil
}

// PeopleTables is the people table's config: the generator's public
// domains, except suburb, left undeclared to show how mechanisms differ on
// GROUP BY over a column without a public domain.
func PeopleTables() (map[string]any, error) {
	t := dataset.PeopleTable()
	for i := range t.Columns {
		if t.Columns[i].Name == "suburb" {
			t.Columns[i].Categories = nil
		}
	}
	out, err := tables(t)
	if err != nil {
		return nil, err
	}
	// The sum attacks sum income: its public bounds, which the mechanisms
	// that answer sums need, are its declared range.
	if people, ok := out[t.Name].(map[string]any); ok && people["bounds"] == nil {
		for _, c := range t.Columns {
			if c.Name == "income" && c.HasRange {
				people["bounds"] = map[string]any{"income": map[string]any{"min": c.Min, "max": c.Max}}
			}
		}
	}
	return out, nil
}
