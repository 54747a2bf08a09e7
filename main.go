// Command countwall is an embedded SQL query firewall: it fronts a SQLite
// database, answers analysts' COUNT queries through a disclosure-control
// mechanism, and ships the attacks that measure how much each mechanism leaks.
// The commands live in internal/cli; main only runs them.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"countwall/dataset/progress"
	"countwall/internal/cli"
)

func main() {
	// Ctrl-C or SIGTERM cancels the commands' context: long writes stop
	// cleanly and remove their temporary files, serve shuts down gracefully.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cli.New().ExecuteContext(ctx)
	stop()
	if err != nil {
		progress.ClearOpen() // a command cut short leaves its bar drawn
		fmt.Fprintln(os.Stderr, "countwall:", err)
		os.Exit(1)
	}
}
