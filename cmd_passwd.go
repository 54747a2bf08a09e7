package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"countwall/proxy/pgwire"
)

func init() {
	var iterations int
	cmd := &cobra.Command{
		Use:   "passwd",
		Short: "Print a SCRAM-SHA-256 verifier for an analyst's password, to paste into the config",
		Long: `passwd reads a password from standard input (one line) and prints the SCRAM-SHA-256
verifier to put in the config as analysts.NAME.password. On a terminal the password is not
echoed as it is typed. The password itself is never stored.`,
		Example: `  printf '%s\n' 'alice-secret' | countwall passwd`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			password, err := readPassword(cmd.InOrStdin(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if password == "" {
				return errors.New("the password is empty")
			}
			v, err := pgwire.NewVerifier(password, iterations)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), v)
			return nil
		},
	}
	cmd.Flags().IntVar(&iterations, "iterations", 4096, "PBKDF2 iterations (at least 4096)")
	rootCmd.AddCommand(cmd)
}

// readPassword reads one line: from the terminal without echo when standard
// input is one, else from in (a pipe or a file).
func readPassword(in io.Reader, prompt io.Writer) (string, error) {
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
