// Command gpucost collects GPU prices into ClickHouse and tells each team where its workloads
// run cheapest. Each subcommand is one job; `gpucost help` lists them and `gpucost CMD --help`
// documents each. Only this package reads the environment and wires packages together.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"github.com/gpucost/gpucost/redact"
)

// version is set at build time: go build -ldflags "-X main.version=v1.2.3".
var version = "dev"

// Exit codes, documented in README.md and docs/operations.md: cron and Kubernetes act on them.
// A scrape also exits 4 (exitBusy, scrape.go) when another holds the lock.
const (
	exitOK      = 0 // everything worked
	exitFailed  = 1 // the command failed
	exitUsage   = 2 // bad flags or arguments
	exitPartial = 3 // some of the work failed (some providers of a scrape, or batches wait in its spool)
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

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e env, args []string) int
}

func commands() []command {
	cmds := []command{
		{"migrate", "create or upgrade the ClickHouse schema", runMigrate},
		{"scrape", "run one scrape of every enabled provider into ClickHouse", runScrape},
		{"offers", "list the current market from the store, cheapest first", runOffers},
		{"optimize", "plan each team's workloads on the cheapest fitting offers; store and print the plan", runOptimize},
		{"gpus", "list the GPU catalog: throughput per precision, memory, fabric, the engines each runs", runGPUs},
		{"serve", "run the scheduled jobs with /healthz, /metrics, the JSON API and the dashboard", runServe},
		{"config", "print the effective configuration, secrets masked", runConfig},
		{"version", "print the gpucost version", runVersion},
		{"report", "write the weekly savings report, or email each team its own", runReport},
		{"history", "price history of one GPU model per hour, day or week, by provider (table, JSON, CSV, chart)", runHistory},
		{"changes", "list price changes: each time an offer's price moved, old and new price and percent", runChanges},
		{"import", "load a published price table (CSV) as observations, checked line by line", runImport},
		{"export", "write offers or history as CSV or Parquet for notebooks", runExport},
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
			return c.run(ctx, e, args[1:])
		}
	}
	fmt.Fprintf(e.stderr, "gpucost: unknown command %q (see gpucost help)\n", args[0])
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "gpucost: GPU prices from Vast.ai, RunPod, Lambda and CoreWeave in ClickHouse, and the cheapest placement of each workload.")
	fmt.Fprintln(w, "\nUsage: gpucost COMMAND [flags]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun gpucost COMMAND --help for a command's flags.")
}

// flags is a subcommand's flag set with the text its --help prints.
type flags struct {
	*flag.FlagSet
	synopsis, help string
	configPath     *string // --config, for commands that read the configuration
}

// withConfig adds the --config flag of every command that reads the configuration.
func (f *flags) withConfig() {
	f.configPath = f.String("config", "", "config file (default $GPUCOST_CONFIG, else the embedded defaults)")
}

// config loads the configuration: the embedded defaults, the file of --config or
// GPUCOST_CONFIG, then GPUCOST_* variables. On error it prints it and returns the exit code
// (bad configuration is a usage error); otherwise the code is -1.
func (f *flags) config(e env) (Config, int) {
	path := *f.configPath
	if path == "" {
		path = e.getenv("GPUCOST_CONFIG")
	}
	cfg, err := loadConfig(path, e.getenv)
	passwords, apiKeys := cfg.secrets(e.getenv)
	e.secrets.Add(passwords...)
	e.secrets.AddSent(apiKeys...)
	if err != nil {
		fmt.Fprintf(e.stderr, "gpucost %s: %v\n", f.Name(), err)
		return cfg, exitUsage
	}
	return cfg, -1
}

func newFlags(name, synopsis, help string) *flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parse reports errors itself
	fs.Usage = func() {}
	return &flags{FlagSet: fs, synopsis: synopsis, help: help}
}

func (f *flags) usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: gpucost %s %s\n\n%s\n", f.Name(), f.synopsis, f.help)
	fmt.Fprintln(w, "\nFlags:")
	f.SetOutput(w)
	f.PrintDefaults()
	f.SetOutput(io.Discard)
}

// parse parses args and maps the outcome to an exit code: -1 means carry on. --help prints the
// usage on stdout and succeeds; a bad flag or argument prints the error and usage on stderr.
func (f *flags) parse(e env, args []string) int {
	err := f.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		f.usage(e.stdout)
		return exitOK
	}
	if err == nil && f.NArg() > 0 {
		err = fmt.Errorf("unexpected argument %q", f.Arg(0))
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "gpucost %s: %v\n\n", f.Name(), err)
		f.usage(e.stderr)
		return exitUsage
	}
	return -1
}

// writeIndentedJSON writes v as indented JSON, the form of every JSON gpucost prints or serves.
func writeIndentedJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
