package main

import (
	"context"
	"fmt"
	"net/url"

	"github.com/goccy/go-yaml"

	"github.com/gpucost/gpucost/redact"
)

const configHelp = `Print the effective configuration as YAML: the embedded defaults, overlaid by the config file
and GPUCOST_* environment variables. Secrets are masked: the DSN's password is replaced, and for
each provider the output says whether an API key was found, never the key.

Every value is checked as every command checks it (the DSN as the driver parses it, timeouts,
limits, cron schedules, addresses, URLs): a bad one is an error naming the file and line, or
the GPUCOST_* variable, and the key, with exit code 2.`

func runConfig(_ context.Context, e env, args []string) int {
	fs := newFlags("config", "print [--config FILE]", configHelp)
	fs.withConfig()
	if len(args) == 0 || (args[0] != "print" && args[0] != "-h" && args[0] != "--help" && args[0] != "-help") {
		fmt.Fprintln(e.stderr, "gpucost config: want the subcommand print (gpucost config print [--config FILE])")
		return exitUsage
	}
	if args[0] == "print" {
		args = args[1:]
	}
	if code := fs.parse(e, args); code >= 0 {
		return code
	}
	cfg, code := fs.config(e)
	if code >= 0 {
		return code
	}
	cfg.ClickHouse.DSN = maskDSN(cfg.ClickHouse.DSN)
	out, err := yaml.Marshal(cfg)
	if err != nil {
		fmt.Fprintf(e.stderr, "gpucost config: %v\n", err)
		return exitFailed
	}
	// The configuration is text of gpucost's own, printed as a message: a credential in any
	// value (a URL's password, ?api_key=) is masked by its shape.
	fmt.Fprint(e.stdout, e.secrets.String(string(out)))
	fmt.Fprintln(e.stdout, "# API keys found:")
	for _, name := range providerNames {
		pc, _ := providerConfig(cfg, name)
		state := "not set"
		if key, err := pc.apiKey(e.getenv); err != nil {
			state = "error: " + err.Error()
		} else if key != "" {
			state = "set (masked)"
		}
		fmt.Fprintf(e.stdout, "#   %s: %s\n", name, state)
	}
	return exitOK
}

// maskDSN replaces the DSN's password, given as the user's or as a parameter, with REDACTED.
func maskDSN(dsn string) string {
	if _, err := url.Parse(dsn); err != nil {
		return "(unparsable DSN, hidden)"
	}
	return (*redact.Redactor)(nil).URL(dsn)
}
