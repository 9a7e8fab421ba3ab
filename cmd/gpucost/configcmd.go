package main

import (
	"context"

	"github.com/gpucost/gpucost/config"
)

const configHelp = `Print the effective configuration as YAML: the embedded defaults, overlaid by the config file
and GPUCOST_* environment variables. Secrets are masked: the DSN's password is replaced, and for
each provider the output says whether an API key was found, never the key.

Every value is checked as every command checks it (the DSN as the driver parses it, timeouts,
limits, cron schedules, addresses, URLs): a bad one is an error naming the file and line, or
the GPUCOST_* variable, and the key, with exit code 2.`

func runConfig(_ context.Context, e env, args []string) error {
	fs := newFlags("config", "print [--config FILE]", configHelp)
	fs.withConfig()
	if len(args) == 0 || (args[0] != "print" && args[0] != "-h" && args[0] != "--help" && args[0] != "-help") {
		return badUsage("want the subcommand print (gpucost config print [--config FILE])")
	}
	if args[0] == "print" {
		args = args[1:]
	}
	if err := fs.parse(e, args, 0); err != nil {
		return err
	}
	cfg, err := fs.config(e)
	if err != nil {
		return err
	}
	return config.WriteEffective(e.stdout, cfg, e.getenv, e.secrets.String)
}
