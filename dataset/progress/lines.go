package progress

import (
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/dustin/go-humanize"
)

// LineEvery is how often a progress line is written when the output is not
// a terminal: often enough to show a long run is alive, rarely enough to
// keep a log readable.
const LineEvery = 10 * time.Second

// Attack reports an attack's progress on w: the progress bar on a
// terminal, and away from one (a log file, a pipe, nohup) a line every
// LineEvery with the queries sent (read with sent), their rate, the stage
// the attack is at, the steps done and the time left. It is quiet when CI
// is set and inside go test. stop ends the lines; update and stage are nil
// when they show nothing.
//
// On a terminal, stop clears the bar: an attack cut short (Ctrl-C) stops
// its progress before printing what it recovered, which must not land on
// the bar's line.
func Attack(w io.Writer, label string, sent func() int) (update func(done, total int), stage func(string), stop func()) {
	return attack(w, isTerminal(w) && !InCI(), label, sent)
}

// attack is Attack on w, a terminal or not.
func attack(w io.Writer, terminal bool, label string, sent func() int) (update func(done, total int), stage func(string), stop func()) {
	if terminal {
		bar, finish := newBar(w, label)
		return counting(bar, finish), nil, finish
	}
	if InCI() || testing.Testing() {
		return nil, nil, func() {}
	}
	l := NewLines(w, label, sent, time.Now)
	return l.Update, l.Stage, l.Start(LineEvery)
}

// Lines writes progress lines: label, the queries sent and their rate, the
// steps done of the total, and the time left at the rate so far.
type Lines struct {
	w     io.Writer
	label string
	sent  func() int
	now   func() time.Time

	mu          sync.Mutex
	start       time.Time
	done, total int
	stage       string
}

// NewLines starts the clock of a run whose queries sent reads; now is the
// clock (time.Now outside tests).
func NewLines(w io.Writer, label string, sent func() int, now func() time.Time) *Lines {
	return &Lines{w: w, label: label, sent: sent, now: now, start: now()}
}

// Update records the steps done of total; the next line shows them.
func (l *Lines) Update(done, total int) {
	l.mu.Lock()
	l.done, l.total = done, total
	l.mu.Unlock()
}

// Stage records what the work is at ("column 3 of 10 (age)"); the next
// line shows it.
func (l *Lines) Stage(stage string) {
	l.mu.Lock()
	l.stage = stage
	l.mu.Unlock()
}

// Start writes a line every interval until the returned stop is called.
func (l *Lines) Start(interval time.Duration) (stop func()) {
	quit, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				l.Write()
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(quit)
			<-finished
		})
	}
}

// Write writes one line now: "idp-reconstruct: 12,345 queries (410/s),
// column 3 of 10 (age), 3 of 9 steps done (33%), about 1m20s left".
func (l *Lines) Write() {
	l.mu.Lock()
	done, total, stage := l.done, l.total, l.stage
	l.mu.Unlock()
	elapsed := l.now().Sub(l.start)
	line := l.label + ":"
	if l.sent != nil {
		n := l.sent()
		line += " " + humanize.Comma(int64(n)) + " queries"
		if s := elapsed.Seconds(); s > 0 {
			line += fmt.Sprintf(" (%s/s)", humanize.Comma(int64(float64(n)/s)))
		}
		line += ","
	}
	if stage != "" {
		line += " " + stage + ","
	}
	switch {
	case total <= 0:
		line += fmt.Sprintf(" %s elapsed", elapsed.Round(time.Second))
	case done <= 0:
		line += fmt.Sprintf(" 0 of %s steps done, %s elapsed", humanize.Comma(int64(total)), elapsed.Round(time.Second))
	default:
		left := time.Duration(float64(elapsed) * float64(total-done) / float64(done))
		line += fmt.Sprintf(" %s of %s steps done (%.0f%%), about %s left", humanize.Comma(int64(done)), humanize.Comma(int64(total)),
			100*float64(done)/float64(total), left.Round(time.Second))
	}
	fmt.Fprintln(l.w, line)
}
