package progress

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestInCI(t *testing.T) {
	tests := []struct {
		value string
		set   bool
		want  bool
	}{
		{"", false, false},
		{"", true, false},
		{"true", true, true},
		{"1", true, true},
		{"false", true, false},
		{"0", true, false},
		{"github-actions", true, true}, // an unrecognised non-empty value counts as CI
	}
	for _, tt := range tests {
		if tt.set {
			t.Setenv("CI", tt.value)
		} else {
			t.Setenv("CI", "")
			os.Unsetenv("CI")
		}
		if got := InCI(); got != tt.want {
			t.Errorf("CI=%q (set %v): InCI = %v, want %v", tt.value, tt.set, got, tt.want)
		}
	}
}

// Off a terminal nothing is drawn: the callbacks are nil, so callers pass
// no progress at all, and finish is safe to call.
func TestQuietOffTerminal(t *testing.T) {
	var b bytes.Buffer
	update, finish := Bar(&b, "writing")
	if update != nil {
		t.Error("Bar gave an update callback for a buffer")
	}
	finish()
	if Counter(&b, "attacking") != nil {
		t.Error("Counter gave a callback for a buffer")
	}
	if b.Len() != 0 {
		t.Errorf("wrote %q", b.String())
	}
}

// On a terminal an attack's stop clears the bar's line, even when the
// attack was cut short before its last step (Ctrl-C), and an update after
// it draws nothing: the result printed next starts on a clean line.
func TestAttackStopClearsTheBar(t *testing.T) {
	var b bytes.Buffer
	update, _, stop := attack(&b, true, "averaging", func() int { return 0 })
	update(3, 10)
	drawn := b.String()
	if !strings.Contains(drawn, "averaging") || !strings.Contains(drawn, "/10)") {
		t.Fatalf("the bar was not drawn: %q", drawn)
	}
	stop()
	cleared := strings.TrimPrefix(b.String(), drawn)
	if !strings.HasPrefix(cleared, "\r") || !strings.HasSuffix(cleared, "\r") || strings.TrimSpace(cleared) != "" {
		t.Errorf("stop wrote %q, want the line blanked and the cursor at its start", cleared)
	}
	update(5, 10)
	stop()
	if after := strings.TrimPrefix(b.String(), drawn+cleared); after != "" {
		t.Errorf("after stop, wrote %q", after)
	}
}

// A bar left drawn by work cut short is cleared by ClearOpen, which main
// calls before it prints the error; a bar already cleared is not touched
// again, and an update after it draws nothing.
func TestClearOpenClearsBarsLeftDrawn(t *testing.T) {
	var left, done bytes.Buffer
	updateLeft, _ := newBar(&left, "auditing laplace")
	updateDone, finishDone := newBar(&done, "generating people")
	updateLeft(3, 10)
	updateDone(10, 10)
	finishDone()
	drawnLeft, drawnDone := left.String(), done.String()
	ClearOpen()
	cleared := strings.TrimPrefix(left.String(), drawnLeft)
	if !strings.HasPrefix(cleared, "\r") || strings.TrimSpace(cleared) != "" {
		t.Errorf("ClearOpen wrote %q on the open bar, want its line blanked", cleared)
	}
	if done.String() != drawnDone {
		t.Errorf("ClearOpen wrote %q on a bar already cleared", strings.TrimPrefix(done.String(), drawnDone))
	}
	updateLeft(5, 10)
	if after := strings.TrimPrefix(left.String(), drawnLeft+cleared); after != "" {
		t.Errorf("an update after ClearOpen drew %q", after)
	}
}
