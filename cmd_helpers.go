package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
)

// addConfigFlags adds the flags that override config keys.
func addConfigFlags(cmd *cobra.Command) {
	cmd.Flags().String("database", "", "protected SQLite database (overrides the config)")
	cmd.Flags().String("state", "", "state database (overrides the config)")
	cmd.Flags().String("mechanism.name", "", "mechanism (overrides the config)")
}

// startCPUProfile profiles the command into the --cpuprofile file, if one
// was named; the returned function stops it.
func startCPUProfile(cmd *cobra.Command) (func(), error) {
	path, _ := cmd.Flags().GetString("cpuprofile")
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// workDir is the directory a command works in: keep when given (made if
// need be, left in place), else a temporary one that cleanup removes.
func workDir(keep, prefix string) (dir string, cleanup func(), err error) {
	if keep != "" {
		return keep, func() {}, os.MkdirAll(keep, 0o755)
	}
	tmp, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}

// progressBar keeps one progress line for label up to date on w when w is a
// terminal and CI is not set; otherwise update is nil (no progress), so logs
// and CI output stay clean. finish clears the line.
func progressBar(w io.Writer, label string) (update func(done, total int64), finish func()) {
	f, ok := w.(*os.File)
	if !ok || !isatty.IsTerminal(f.Fd()) || runningInCI() {
		return nil, func() {}
	}
	bar := progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(f),
		progressbar.OptionSetDescription(label),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	update = func(done, total int64) {
		if bar.GetMax64() != total {
			bar.ChangeMax64(total)
		}
		bar.Set64(done) //nolint:errcheck // a progress line that fails to draw is no error
	}
	return update, func() { bar.Clear() } //nolint:errcheck // as above
}

// progressCounter is progressBar for callers that count in int (the
// attacks, the audit, the experiments); the line clears when done reaches
// total.
func progressCounter(w io.Writer, label string) func(done, total int) {
	update, finish := progressBar(w, label)
	if update == nil {
		return nil
	}
	return func(done, total int) {
		update(int64(done), int64(total))
		if done >= total {
			finish()
		}
	}
}

// runningInCI reports whether the CI variable is set to something true.
func runningInCI() bool {
	v, ok := os.LookupEnv("CI")
	if !ok || v == "" {
		return false
	}
	b, err := strconv.ParseBool(v)
	return err != nil || b // an unrecognised non-empty value counts as CI
}
