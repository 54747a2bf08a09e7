package cli

import (
	"github.com/spf13/cobra"

	"countwall/internal/profile"
)

// addConfigFlags adds the flags that override config keys.
func addConfigFlags(cmd *cobra.Command) {
	cmd.Flags().String("database", "", "protected SQLite database (overrides the config)")
	cmd.Flags().String("state", "", "state database (overrides the config)")
	cmd.Flags().String("mechanism.name", "", "mechanism (overrides the config)")
}

// startCPUProfile profiles the command into its --cpuprofile file, if one
// was named; the returned function stops it.
func startCPUProfile(cmd *cobra.Command) (func(), error) {
	path, _ := cmd.Flags().GetString("cpuprofile")
	return profile.StartCPU(path)
}
