package main

import (
	"github.com/spf13/cobra"

	"github.com/gpucost/gpucost/config"
)

const configHelp = `Print the effective configuration as YAML: the embedded defaults, overlaid by the config file
and GPUCOST_* environment variables. Secrets are masked: the DSN's password is replaced, and for
each provider the output says whether an API key was found, never the key. The folders left
empty (scrape.spool_dir, report.out_dir) are printed where they are: in gpucost's state folder.

Every value is checked as every command checks it (the DSN as the driver parses it, timeouts,
limits, cron schedules, addresses, URLs): a bad one is an error naming the file and line, or
the GPUCOST_* variable, and the key, with exit code 2.`

func configCommand(e env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config print",
		Short: "print the effective configuration, secrets masked",
		Long:  configHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return badUsageOf(cmd, "want the subcommand print, not %q (gpucost config print [--config FILE])", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return badUsageOf(cmd, "want the subcommand print (gpucost config print [--config FILE])")
		},
	}
	var cf configFlag
	printCmd := &cobra.Command{
		Use:   "print",
		Short: "print the effective configuration as YAML, secrets masked",
		Long:  configHelp,
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			cfg, err := cf.load(e)
			if err != nil {
				return err
			}
			return config.WriteEffective(e.stdout, cfg, e.getenv, e.secrets.String)
		},
	}
	cf.add(printCmd)
	cmd.AddCommand(printCmd)
	return cmd
}
