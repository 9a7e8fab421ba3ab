// Command gpucost collects GPU prices into ClickHouse and tells each team where its workloads
// run cheapest. Each subcommand is one job; `gpucost help` lists them and `gpucost CMD --help`
// documents each. This package only wires: it reads the flags and the environment, calls one
// package to do the work, renders the result, and maps the outcome to an exit code (exitCode).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/gpucost/gpucost/delivery"
	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/redact"
	"github.com/gpucost/gpucost/reparse"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/selection"
)

// version is set at build time: go build -ldflags "-X main.version=v1.2.3".
var version = "dev"

// Exit codes, documented in README.md and docs/operations.md: cron and Kubernetes act on them.
const (
	exitOK      = 0 // everything worked
	exitFailed  = 1 // the command failed
	exitUsage   = 2 // bad flags, arguments, configuration or input file
	exitPartial = 3 // some of the work failed (some providers of a scrape, some teams of a report, batches waiting in a spool)
	exitBusy    = 4 // another scrape holds the lock
	// exitQuarantined: a scrape's spool holds batches in quarantine, which will not load until an
	// operator looks at them (docs/operations.md).
	exitQuarantined = 5
)

// env is the process environment as the commands see it: a function so tests can supply theirs.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	// secrets scrubs everything the command writes: stdout and stderr (and so every log line)
	// from the start, and through the pipeline, the scrapers and the report writers what goes
	// to ClickHouse, the spool, record folders and report files. The configuration adds its
	// secrets as it loads (flags.config).
	secrets *redact.Redactor
}

// command is one subcommand. run returns nil on success, or an error that exitCode maps.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e env, args []string) error
}

func commands() []command {
	cmds := []command{
		{"migrate", "create or upgrade the ClickHouse schema", runMigrate},
		{"scrape", "run one scrape of every enabled provider into ClickHouse", runScrape},
		{"offers", "list the current market from the store, cheapest first", runOffers},
		{"optimize", "plan each team's workloads on the cheapest fitting offers; store and print the plan", runOptimize},
		{"gpus", "list the GPU catalog: throughput, memory, fabric, engines; --value: $ per TFLOP-hour now", runGPUs},
		{"serve", "run the scheduled jobs with /healthz, /metrics, the JSON API and the dashboard", runServe},
		{"config", "print the effective configuration, secrets masked", runConfig},
		{"version", "print the gpucost version", runVersion},
		{"report", "write the weekly savings report, or email each team its own", runReport},
		{"history", "price history of one GPU model per hour, day or week, by provider (table, JSON, CSV, chart)", runHistory},
		{"changes", "list price changes: each time an offer's price moved, old and new price and percent", runChanges},
		{"import", "load a published price table (CSV) as observations, checked line by line", runImport},
		{"export", "write offers or history as CSV or Parquet for notebooks", runExport},
		{"reparse", "re-derive stored runs' offers from their raw payloads with today's parsers", runReparse},
		{"tco", "rent or buy: each workload's rental against owning its GPUs, or one GPU's break-even", runTCO},
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].name < cmds[j].name })
	return cmds
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, env{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, os.Args[1:])
	stop()
	os.Exit(code)
}

func run(ctx context.Context, e env, args []string) int {
	if e.secrets == nil {
		// stdout carries data (tables, CSV, JSON, Parquet): secret values go. stderr carries
		// messages (logs, errors): credential shapes go too.
		e.secrets = redact.New()
		stdout, stderr := e.secrets.DataWriter(e.stdout), e.secrets.Writer(e.stderr)
		defer stderr.Flush()
		defer stdout.Flush()
		e.stdout, e.stderr = stdout, stderr
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(e.stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return execute(ctx, e, c.name, c.run, args[1:])
		}
	}
	fmt.Fprintf(e.stderr, "gpucost: unknown command %q (see gpucost help)\n", args[0])
	return exitUsage
}

// execute runs one command's function and returns its exit code, its error printed.
func execute(ctx context.Context, e env, name string, fn func(context.Context, env, []string) error, args []string) int {
	err := fn(ctx, e, args)
	printError(e.stderr, name, err)
	return exitCode(err)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "gpucost: GPU prices from Vast.ai, RunPod, Lambda, CoreWeave, Verda, Oracle Cloud (OCI), Vultr, Nebius, DigitalOcean, Hyperstack and TensorDock in ClickHouse, and the cheapest placement of each workload.")
	fmt.Fprintln(w, "\nUsage: gpucost COMMAND [flags]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun gpucost COMMAND --help for a command's flags.")
}

// errHelpShown ends a command whose --help was printed: exit code 0, nothing more to say.
var errHelpShown = errors.New("help shown")

// usageError is a bad flag, argument or value: exit code 2; with usage set, the command's usage
// follows the message.
type usageError struct {
	err   error
	usage string
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// badUsage returns a usage error with the message of format.
func badUsage(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

// exitCode maps a command's outcome to its exit code, the one place that does.
func exitCode(err error) int {
	var ue *usageError
	var se *selection.Error
	var ie *optimizer.InputError
	var run *pipeline.Incomplete
	var mailing *delivery.Incomplete
	var kept *reparse.Incomplete
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errHelpShown):
		return exitOK
	case errors.As(err, &run):
		switch {
		case run.Status == schema.RunFailed:
			return exitFailed
		case run.Quarantined > 0:
			return exitQuarantined
		}
		return exitPartial
	case errors.As(err, &kept):
		return exitPartial
	case errors.As(err, &mailing):
		if mailing.Outcome == delivery.Partial {
			return exitPartial
		}
		return exitFailed
	case errors.As(err, &ue), errors.As(err, &se), errors.As(err, &ie):
		return exitUsage
	case errors.Is(err, pipeline.ErrBusy):
		return exitBusy
	}
	return exitFailed
}

// printError prints a command's error on stderr as "gpucost NAME: message" (a bad selection names
// its flag), one line per error when several are joined, then the usage a usage error carries.
func printError(w io.Writer, name string, err error) {
	if err == nil || errors.Is(err, errHelpShown) || err.Error() == "" {
		return
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		msg := e.Error()
		var se *selection.Error
		if errors.As(e, &se) && !strings.HasPrefix(msg, se.Param+":") {
			msg = se.Flag() + ": " + msg
		}
		fmt.Fprintf(w, "gpucost %s: %s\n", name, msg)
	}
	var ue *usageError
	if errors.As(err, &ue) && ue.usage != "" {
		fmt.Fprintf(w, "\n%s", ue.usage)
	}
}
