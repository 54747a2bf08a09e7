// Command countwall is an embedded SQL query firewall: it fronts a SQLite
// database, answers analysts' COUNT queries through a disclosure-control
// mechanism, and ships the attacks that measure how much each mechanism leaks.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// rootCmd is the countwall command; each cmd_*.go file adds its subcommand in init.
var rootCmd = &cobra.Command{
	Use:           "countwall",
	Short:         "An SQL COUNT query firewall in front of SQLite, with the attacks that test it",
	SilenceUsage:  true,
	SilenceErrors: true,
}

func main() {
	// Ctrl-C or SIGTERM cancels the commands' context: long writes stop
	// cleanly and remove their temporary files, serve shuts down gracefully.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := rootCmd.ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "countwall:", err)
		os.Exit(1)
	}
}
