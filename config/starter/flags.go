package starter

import (
	"context"
	"io"

	"github.com/spf13/pflag"

	"countwall/dataset"
)

// Flags are the command-line flags of a written config, shared by `load
// --config-out`, `gen bank --config-out` and `init`.
type Flags struct {
	Out, Analyst, Mechanism, Listen string
	Replace                         bool
}

// Add defines the flags on f, the file's own as outName.
func (s *Flags) Add(f *pflag.FlagSet, outName, outUsage string) {
	f.StringVar(&s.Out, outName, "", outUsage)
	f.StringVar(&s.Analyst, "analyst", "analyst", "the analyst the config names, with a generated password shown once")
	f.StringVar(&s.Mechanism, "mechanism", "laplace", "the mechanism in force (every mechanism's parameters are written)")
	f.StringVar(&s.Listen, "listen", "127.0.0.1:5433", "server.listen")
	f.BoolVar(&s.Replace, "replace-config", false, "replace the config file if it exists")
}

// Write writes the config the flags ask for, fronting table t of the
// database at dbPath (as Create does, with its verifier and check), and
// prints the analyst's password once with what to review.
func (s Flags) Write(ctx context.Context, w io.Writer, dbPath string, t dataset.Table, verifier func(password string) (string, error), check func(path string) error) error {
	o := Options{ConfigPath: s.Out, Database: dbPath, Analyst: s.Analyst, Mechanism: s.Mechanism, Listen: s.Listen}
	made, err := Create(ctx, o, t, s.Replace, verifier, check)
	if err != nil {
		return err
	}
	o.Table = t
	made.Print(w, o)
	return nil
}
