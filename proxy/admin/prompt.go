package admin

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"
	"golang.org/x/term"
)

// Confirm asks question on out and reads the answer from in, which must be
// a terminal: a person answers, not a script (that passes the override
// flag instead). Anything but y or yes cancels what is named.
func Confirm(in io.Reader, out io.Writer, question, what, override string) error {
	f, ok := in.(*os.File)
	if !ok || !(isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())) {
		return fmt.Errorf("%s needs confirmation: run it on a terminal, or pass %s", what, override)
	}
	fmt.Fprintf(out, "%s [y/N] ", question)
	answer, _ := bufio.NewReader(in).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		return errors.New(what + " cancelled")
	}
	return nil
}

// ReadPassword reads one line: from the terminal without echo when standard
// input is one, else from in (a pipe or a file).
func ReadPassword(in io.Reader, prompt io.Writer) (string, error) {
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(prompt, "Password (not shown): ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(prompt)
		if err != nil {
			return "", fmt.Errorf("reading the password from the terminal: %w", err)
		}
		return string(b), nil
	}
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && line == "" {
		return "", errors.New("no password on standard input")
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// PrintVerifier is `countwall passwd`: it reads a password (ReadPassword)
// and prints its SCRAM-SHA-256 verifier, made by verifier, to out.
func PrintVerifier(in io.Reader, prompt, out io.Writer, verifier func(password string) (string, error)) error {
	password, err := ReadPassword(in, prompt)
	if err != nil {
		return err
	}
	if password == "" {
		return errors.New("the password is empty")
	}
	v, err := verifier(password)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, v)
	return nil
}
