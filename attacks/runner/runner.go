// Package runner runs one attack program the way `countwall attack NAME`
// does: it reaches the firewall over the wire or in process through a
// config, logs every statement, executes and scores the attack, prints what
// it recovered and writes the result as JSON.
package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"countwall/attacks"
	"countwall/config"
	"countwall/proxy"
)

// Open reaches a firewall: over the wire at dsn, or in process through the
// config at configPath (with flags overriding its keys, when given) as
// analyst. Exactly one of dsn and configPath is given; closeQ releases it.
func Open(ctx context.Context, dsn, configPath string, flags *pflag.FlagSet, analyst string) (q attacks.Querier, closeQ func(), err error) {
	q, _, closeQ, err = openFirewall(ctx, dsn, configPath, flags, analyst)
	return q, closeQ, err
}

// openFirewall is Open, with reconnect, which opens one more connection to
// the same firewall: another wire connection to dsn, or another session of
// the same in-process Engine, as the same analyst. closeQ releases the
// firewall; close every further connection before it.
func openFirewall(ctx context.Context, dsn, configPath string, flags *pflag.FlagSet, analyst string) (q attacks.Querier, reconnect func(context.Context) (attacks.Querier, func(), error), closeQ func(), err error) {
	switch {
	case dsn != "" && configPath != "":
		return nil, nil, nil, errors.New("give --dsn or --config, not both")
	case dsn != "":
		dial := func(ctx context.Context) (attacks.Querier, func(), error) {
			w, err := attacks.Dial(ctx, dsn)
			if err != nil {
				return nil, nil, err
			}
			return w, func() { w.Close() }, nil
		}
		q, closeQ, err := dial(ctx)
		if err != nil {
			return nil, nil, nil, err
		}
		return q, dial, closeQ, nil
	case configPath != "":
		cfg, err := config.Load(configPath, flags)
		if err != nil {
			return nil, nil, nil, err
		}
		e, err := proxy.Open(ctx, cfg, proxy.Options{})
		if err != nil {
			return nil, nil, nil, err
		}
		session := func(context.Context) (attacks.Querier, func(), error) {
			s := e.NewSession(analyst)
			return attacks.InProcess{Session: s}, s.Close, nil
		}
		q, _, _ := session(ctx)
		return q, session, func() { e.Close() }, nil
	}
	return nil, nil, nil, errors.New("give --dsn (a running firewall) or --config (in process)")
}

// Options say where an attack runs and what is kept of it.
type Options struct {
	DSN, Config string         // the firewall: a PostgreSQL URL or a config run in process
	Flags       *pflag.FlagSet // overrides of the config's keys (in process)
	Analyst     string         // the analyst of in-process runs
	SQLLog      string         // file to log every statement to; "" logs none
	Truth       string         // protected database to score against; "" scores nothing
	JSON        string         // file to write the result to; "" writes none
	Emit        bool           // print the attack's SQL script instead of running it
	// Progress, when set, is how the run's progress is shown, given how to
	// read the queries sent so far: update is told the steps done and stage
	// what the attack is at (nil: not shown), stop ends the showing.
	Progress func(sent func() int) (update func(done, total int), stage func(string), stop func())
}

// Defaults are attack a's options before any flag: its demo defaults, which
// work on the demo's people table.
func Defaults(a *attacks.Attack) attacks.Options {
	var o attacks.Options
	if a.Demo != nil {
		o = a.Demo()
	}
	if o.Target.Table == "" {
		o.Target.Table = "people"
	}
	return o
}

// AddFlags binds the flags every attack shares to ro and o, then the
// attack's own (Attack.Flags).
func AddFlags(f *pflag.FlagSet, a *attacks.Attack, o *attacks.Options, ro *Options) {
	f.StringVar(&ro.DSN, "dsn", "", "PostgreSQL URL of a running firewall")
	f.StringVar(&ro.Config, "config", "", "run in process through this config instead of --dsn")
	f.StringVar(&ro.Analyst, "analyst", "attacker", "analyst name for in-process runs")
	f.StringVar(&o.Target.Table, "table", o.Target.Table, "target table")
	f.StringVar(&o.Target.Where, "where", o.Target.Where, "target predicate")
	f.StringVar(&ro.SQLLog, "sql-log", "", "write every statement sent to this file")
	f.StringVar(&ro.Truth, "truth", "", "protected database, to score the result")
	f.StringVar(&ro.JSON, "json", "", "write the result as JSON to this file")
	if a.Script != nil {
		f.BoolVar(&ro.Emit, "emit", false, "print the attack's SQL script instead of running it")
	}
	f.IntVar(&o.MaxQueries, "max-queries", o.MaxQueries, "stop the attack after this many queries (0: no limit)")
	if o.Pipeline == 0 {
		o.Pipeline = attacks.DefaultPipeline
	}
	f.IntVar(&o.Pipeline, "pipeline", o.Pipeline, "statements in flight at once on each connection, sent together, where an attack's next statements do not wait for the answers (idp-reconstruct's searches, noise-remover, bdp-existence, linear-reconstruction, idp-variance; 1: each answer awaited before the next statement)")
	if a.Flags != nil {
		a.Flags(f, o)
	}
}

// List describes the attacks, one line each.
func List(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, a := range attacks.All() {
		fmt.Fprintf(tw, "%s\tagainst %s\t%s (%s)\n", a.Name, a.Against, a.Summary, a.Source)
	}
	return tw.Flush()
}

// Run runs attack a with options o, prints its result to w and writes it
// as JSON when asked; with ro.Emit it prints the attack's script instead. A
// second firewall the attack reaches (o.Connect) is opened as the first
// was, as the same analyst; further connections to the same firewall
// (o.Reconnect, for --parallel) are too.
func Run(ctx context.Context, w io.Writer, a *attacks.Attack, o attacks.Options, ro Options) error {
	if ro.Emit {
		if a.Script == nil {
			return fmt.Errorf("%s is adaptive: its next query depends on the answers, so it has no script to emit", a.Name)
		}
		for _, s := range a.Script(o) {
			fmt.Fprintln(w, s+";")
		}
		return nil
	}
	o.Connect = func(ctx context.Context, dsn, config string) (attacks.Querier, func(), error) {
		return Open(ctx, dsn, config, nil, ro.Analyst)
	}
	q, reconnect, closeQ, err := openFirewall(ctx, ro.DSN, ro.Config, ro.Flags, ro.Analyst)
	if err != nil {
		return err
	}
	defer closeQ()
	o.Reconnect = reconnect
	logged := &attacks.Logged{Querier: q}
	if ro.SQLLog != "" {
		f, err := os.Create(ro.SQLLog)
		if err != nil {
			return err
		}
		defer f.Close()
		logged.Log = f
	}
	stopProgress := func() {}
	if ro.Progress != nil {
		o.Progress, o.Stage, stopProgress = ro.Progress(logged.Sent)
	}
	res, err := attacks.Execute(ctx, a, logged, o, ro.Truth)
	stopProgress() // no progress line after the result
	if err != nil {
		return attacks.WithHint(err)
	}
	res.Reach = attacks.InProcessReach(ro.Config, o.Target.Table)
	if ro.DSN != "" {
		res.Reach = attacks.WireReach(ro.DSN, "", o.Target.Table)
	}
	Print(w, res)
	if ro.JSON != "" {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(ro.JSON, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return interruptedRun(ctx, ro.JSON)
}

// interruptedRun is the error a run ends with when it was interrupted: the
// result was printed (and written) all the same, and the exit status says it
// is partial.
func interruptedRun(ctx context.Context, jsonPath string) error {
	if ctx.Err() == nil {
		return nil
	}
	if jsonPath == "" {
		return errors.New("interrupted: the result above is what the run had recovered")
	}
	return fmt.Errorf("interrupted: the result above is what the run had recovered, written to %s", jsonPath)
}
