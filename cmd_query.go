package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"countwall/config"
	"countwall/pgerror"
	"countwall/proxy"
)

func init() {
	var configPath, analyst string
	cmd := &cobra.Command{
		Use:   "query --config FILE [--analyst NAME] SQL",
		Short: "Answer one statement in process, through the configured mechanism",
		Example: `  countwall query --config examples/countwall.yaml "SELECT sex, COUNT(*) FROM people GROUP BY sex"
  countwall query --config examples/countwall.yaml --mechanism.name exact "SELECT COUNT(*) FROM people WHERE age > 60"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := config.Load(configPath, cmd.Flags())
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			engine, err := proxy.Open(ctx, cfg, proxy.Options{})
			if err != nil {
				return err
			}
			defer engine.Close()
			res, err := engine.Query(ctx, analyst, args[0])
			if err != nil {
				return sqlError(err)
			}
			printResult(cmd.OutOrStdout(), res)
			return nil
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "config file (YAML)")
	cmd.Flags().StringVar(&analyst, "analyst", "local", "analyst the query is charged to")
	addConfigFlags(cmd)
	rootCmd.AddCommand(cmd)
}

// addConfigFlags adds the flags that override config keys.
func addConfigFlags(cmd *cobra.Command) {
	cmd.Flags().String("database", "", "protected SQLite database (overrides the config)")
	cmd.Flags().String("state", "", "state database (overrides the config)")
	cmd.Flags().String("mechanism.name", "", "mechanism (overrides the config)")
}

// sqlError renders an engine refusal the way psql would.
func sqlError(err error) error {
	var pe *pgerror.Error
	if errors.As(err, &pe) && pe.Hint != "" {
		return fmt.Errorf("ERROR %s: %s\nHINT: %s", pe.Code, pe.Message, pe.Hint)
	}
	if st, ok := err.(interface{ SQLState() string }); ok {
		return fmt.Errorf("ERROR %s: %s", st.SQLState(), err.Error())
	}
	return err
}

// printResult prints rows as an aligned table, marking suppressed cells.
func printResult(w io.Writer, res *proxy.Result) {
	if len(res.Columns) == 0 {
		fmt.Fprintln(w, res.Tag)
		return
	}
	cells := make([][]string, 0, len(res.Rows)+1)
	header := make([]string, len(res.Columns))
	for i, c := range res.Columns {
		header[i] = c.Name
	}
	cells = append(cells, header)
	for r, row := range res.Rows {
		line := make([]string, len(row))
		for i, v := range row {
			line[i] = formatValue(res.Columns[i].Type, v)
		}
		if r < len(res.Suppressed) && res.Suppressed[r] {
			line[len(line)-1] += " (suppressed)"
		}
		cells = append(cells, line)
	}
	widths := make([]int, len(header))
	for _, line := range cells {
		for i, c := range line {
			widths[i] = max(widths[i], len(c))
		}
	}
	for n, line := range cells {
		parts := make([]string, len(line))
		for i, c := range line {
			parts[i] = fmt.Sprintf("%-*s", widths[i], c)
		}
		fmt.Fprintln(w, " "+strings.TrimRight(strings.Join(parts, " | "), " "))
		if n == 0 {
			seps := make([]string, len(widths))
			for i, wd := range widths {
				seps[i] = strings.Repeat("-", wd)
			}
			fmt.Fprintln(w, "-"+strings.Join(seps, "-+-")+"-")
		}
	}
	fmt.Fprintf(w, "(%d rows)\n", len(res.Rows))
	if res.Notice != "" {
		fmt.Fprintln(w, "NOTICE:", res.Notice)
	}
}

func formatValue(t proxy.ColumnType, v proxy.Value) string {
	switch {
	case v.Null:
		return "NULL"
	case t == proxy.ColumnInt8:
		return strconv.FormatInt(v.Int, 10)
	case t == proxy.ColumnFloat8:
		return strconv.FormatFloat(v.Float, 'f', -1, 64)
	default:
		return v.Text
	}
}
