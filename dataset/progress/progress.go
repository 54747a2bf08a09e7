// Package progress draws the progress of long work (writing a dataset,
// running an attack or an audit) as one line on a terminal, and nothing
// when the output is not a terminal or CI is set, so that logs and CI
// output stay clean.
package progress

import (
	"io"
	"os"
	"strconv"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
)

// Bar keeps one progress line for label up to date on w when w is a
// terminal and CI is not set; otherwise update is nil (no progress), so logs
// and CI output stay clean. finish clears the line.
func Bar(w io.Writer, label string) (update func(done, total int64), finish func()) {
	f, ok := w.(*os.File)
	if !ok || !isatty.IsTerminal(f.Fd()) || InCI() {
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

// Counter is Bar for callers that count in int (the
// attacks, the audit, the experiments); the line clears when done reaches
// total.
func Counter(w io.Writer, label string) func(done, total int) {
	update, finish := Bar(w, label)
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

// InCI reports whether the CI variable is set to something true.
func InCI() bool {
	v, ok := os.LookupEnv("CI")
	if !ok || v == "" {
		return false
	}
	b, err := strconv.ParseBool(v)
	return err != nil || b // an unrecognised non-empty value counts as CI
}
