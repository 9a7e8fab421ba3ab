package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func versionCommand(e env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print the gpucost version (as gpucost --version does)",
		Long:  "Print the gpucost version and the Go it was built with, as gpucost --version does.",
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(e.stdout, "gpucost %s\n", versionLine())
			return err
		},
	}
}
