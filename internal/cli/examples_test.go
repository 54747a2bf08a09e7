package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"countwall/config"
	"countwall/dataset"
	"countwall/proxy"
)

// exampleTables generate, small, the tables the shipped configs front.
var exampleTables = map[string]func(ctx context.Context, path string) error{
	"people": func(ctx context.Context, path string) error {
		return dataset.GeneratePeople(ctx, path, dataset.PeopleOptions{Rows: 300, Seed: 1}, dataset.WriteOptions{Force: true})
	},
	"bank": func(ctx context.Context, path string) error {
		return dataset.GenerateBank(ctx, path, dataset.BankOptions{Rows: 100, Seed: 1}, dataset.WriteOptions{Force: true})
	},
	"genomes": func(ctx context.Context, path string) error {
		return dataset.GenerateGenomes(ctx, path, dataset.GenomesOptions{People: 5, SNPs: 1600, Seed: 7}, dataset.WriteOptions{Force: true})
	},
}

// Every config in examples/ (the ones the docs use) loads, and a firewall
// opens on it over a generated table of the kind it names: its columns,
// domains, mechanism and budget all hold, and it prices a count.
func TestExampleConfigs(t *testing.T) {
	paths, err := filepath.Glob("../../examples/*.yaml")
	if err != nil || len(paths) < 5 {
		t.Fatalf("examples: %v, %v", paths, err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			ctx := context.Background()
			body, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// In a directory of its own, where its relative paths land.
			dir := t.TempDir()
			cfgPath := writeFile(t, dir, filepath.Base(path), string(body))
			cfg, err := config.Load(cfgPath, nil)
			if err != nil {
				t.Fatalf("loading %s: %v", path, err)
			}
			table := onlyTable(t, cfg)
			generate, ok := exampleTables[table]
			if !ok {
				t.Fatalf("no generator for table %s: add one to exampleTables", table)
			}
			if err := generate(ctx, cfg.Database); err != nil {
				t.Fatal(err)
			}
			engine, err := proxy.Open(ctx, cfg, proxy.Options{})
			if err != nil {
				t.Fatalf("opening a firewall on %s: %v", path, err)
			}
			defer engine.Close()
			res, err := engine.Query(ctx, "alice", "EXPLAIN SELECT COUNT(*) FROM "+table)
			if err != nil {
				t.Fatalf("EXPLAIN under %s: %v", path, err)
			}
			var plan strings.Builder
			res.WriteTable(&plan)
			if !strings.Contains(plan.String(), "Count on "+table+" under "+cfg.Mechanism.Name) {
				t.Errorf("EXPLAIN under %s:\n%s", path, plan.String())
			}
		})
	}
}

// onlyTable is the one table cfg fronts.
func onlyTable(t *testing.T, cfg *config.Config) string {
	t.Helper()
	if len(cfg.Tables) != 1 {
		t.Fatalf("%d tables; an example fronts one", len(cfg.Tables))
	}
	for name := range cfg.Tables {
		return name
	}
	return ""
}
