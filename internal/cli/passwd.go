package cli

import (
	"github.com/spf13/cobra"

	"countwall/proxy/admin"
	"countwall/proxy/pgwire"
)

// newPasswdCmd is `countwall passwd`: a SCRAM verifier for the config.
func newPasswdCmd() *cobra.Command {
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
			return admin.PrintVerifier(cmd.InOrStdin(), cmd.ErrOrStderr(), cmd.OutOrStdout(),
				func(password string) (string, error) { return pgwire.NewVerifier(password, iterations) })
		},
	}
	cmd.Flags().IntVar(&iterations, "iterations", 4096, "PBKDF2 iterations (at least 4096)")
	return cmd
}
