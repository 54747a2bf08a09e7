// Package progress draws the progress of long work (writing a dataset,
// running an attack or an audit) as one line on a terminal, and nothing
// when the output is not a terminal or CI is set, so that logs and CI
// output stay clean.
package progress

import (
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
)

// Bar keeps one progress line for label up to date on w when w is a
// terminal and CI is not set; otherwise update is nil (no progress), so logs
// and CI output stay clean. finish clears the line.
func Bar(w io.Writer, label string) (update func(done, total int64), finish func()) {
	if !isTerminal(w) || InCI() {
		return nil, func() {}
	}
	return newBar(w, label)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

// newBar draws the bar on w. finish clears its line, once, and later
// updates draw nothing: work cut short (Ctrl-C) calls finish before its
// result is printed, and an update still in flight must not draw the bar
// again beside that result.
func newBar(w io.Writer, label string) (update func(done, total int64), finish func()) {
	bar := progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(label),
		progressbar.OptionShowCount(),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	var mu sync.Mutex
	finished := false
	key := new(byte)
	update = func(done, total int64) {
		mu.Lock()
		defer mu.Unlock()
		if finished {
			return
		}
		if bar.GetMax64() != total {
			bar.ChangeMax64(total)
		}
		bar.Set64(done) //nolint:errcheck // a progress line that fails to draw is no error
	}
	finish = func() {
		mu.Lock()
		defer mu.Unlock()
		if !finished {
			finished = true
			bar.Clear() //nolint:errcheck // as above
			open.Delete(key)
		}
	}
	open.Store(key, finish)
	return update, finish
}

// open holds the finish of every bar drawn and not yet cleared.
var open sync.Map

// ClearOpen clears every bar still drawn: a command cut short (Ctrl-C
// during the demo, an audit, an experiment) returns its error while its
// bar is on the line, and the error must start on a clean one.
func ClearOpen() {
	open.Range(func(_, finish any) bool {
		finish.(func())()
		return true
	})
}

// Counter is Bar for callers that count in int (the
// attacks, the audit, the experiments); the line clears when done reaches
// total.
func Counter(w io.Writer, label string) func(done, total int) {
	update, finish := Bar(w, label)
	return counting(update, finish)
}

// counting adapts a bar to int counts, finishing it when done reaches
// total; nil when update is.
func counting(update func(done, total int64), finish func()) func(done, total int) {
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
