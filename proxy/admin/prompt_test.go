package admin

import (
	"bytes"
	"strings"
	"testing"
)

// Off a terminal, Confirm refuses rather than reading a scripted "y", and
// says how to skip the question.
func TestConfirmOffTerminal(t *testing.T) {
	var out bytes.Buffer
	err := Confirm(strings.NewReader("y\n"), &out, "Reset alice?", "reset", "--yes")
	if err == nil || err.Error() != "reset needs confirmation: run it on a terminal, or pass --yes" {
		t.Errorf("Confirm = %v", err)
	}
	if out.Len() != 0 {
		t.Errorf("asked off a terminal: %q", out.String())
	}
}

func TestReadPasswordFromPipe(t *testing.T) {
	tests := []struct {
		in, want, wantErr string
	}{
		{"hunter2\n", "hunter2", ""},
		{"with spaces \r\nsecond line\n", "with spaces ", ""},
		{"no newline", "no newline", ""},
		{"", "", "no password on standard input"},
	}
	for _, tt := range tests {
		var prompt bytes.Buffer
		got, err := ReadPassword(strings.NewReader(tt.in), &prompt)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("%q: err %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%q: %q, %v; want %q", tt.in, got, err, tt.want)
		}
		if prompt.Len() != 0 {
			t.Errorf("%q: prompted off a terminal: %q", tt.in, prompt.String())
		}
	}
}
