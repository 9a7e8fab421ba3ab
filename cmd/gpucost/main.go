// Command gpucost collects GPU prices into ClickHouse and tells each team where its workloads
// run cheapest. Each subcommand is one job, a cobra command (cli.go is the glue); `gpucost help`
// lists them and `gpucost help CMD` or `gpucost CMD --help` documents each. This package only
// wires: it reads the flags and the environment, calls one package to do the work, renders the
// result, and maps the outcome to an exit code (exitCode).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
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

// env is the process environment as the commands see it: a value so tests can supply theirs.
type env struct {
	stdout, stderr io.Writer
	// stdoutTTY and stderrTTY say whether stdout and stderr are terminals (main asks
	// golang.org/x/term): Parquet is not written to one, and a scrape draws its progress line
	// on one.
	stdoutTTY, stderrTTY bool
	getenv               func(string) string
	// secrets scrubs everything the command writes: stdout and stderr (and so every log line)
	// from the start, and through the pipeline, the scrapers and the report writers what goes
	// to ClickHouse, the spool, record folders and report files. The configuration adds its
	// secrets as it loads (configFlag.load).
	secrets *redact.Redactor
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, osEnv(os.Stdout, os.Stderr, os.Getenv), os.Args[1:])
	stop()
	os.Exit(code)
}

// osEnv is the environment of a process writing to stdout and stderr.
func osEnv(stdout, stderr *os.File, getenv func(string) string) env {
	return env{stdout: stdout, stderr: stderr, stdoutTTY: isTerminal(stdout), stderrTTY: isTerminal(stderr), getenv: getenv}
}

// run runs gpucost with args (the command line after the program name) and returns its exit
// code, its error printed on e.stderr.
func run(ctx context.Context, e env, args []string) int {
	return execute(ctx, e, args, scrapeHooks{})
}

// execute is run with the scrape's hooks (scrapeHooks).
func execute(ctx context.Context, e env, args []string, hooks scrapeHooks) int {
	if e.secrets == nil {
		// stdout carries data (tables, CSV, JSON, Parquet): secret values go. stderr carries
		// messages (logs, errors): credential shapes go too.
		e.secrets = redact.New()
		stdout, stderr := e.secrets.DataWriter(e.stdout), e.secrets.Writer(e.stderr)
		defer stderr.Flush()
		defer stdout.Flush()
		e.stdout, e.stderr = stdout, stderr
	}
	root := newRoot(e, hooks)
	if args == nil {
		args = []string{} // cobra reads os.Args when given nil
	}
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	name := ""
	if cmd != nil && cmd != root {
		name = strings.TrimPrefix(cmd.CommandPath(), root.Name()+" ")
	}
	printError(e.stderr, name, err)
	return exitCode(err)
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

// printError prints a command's error on stderr as "gpucost NAME: message" ("gpucost: message"
// without a command; a bad selection names its flag), one line per error when several are
// joined, then the usage a usage error carries.
func printError(w io.Writer, name string, err error) {
	if err == nil || err.Error() == "" {
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
		prefix := "gpucost"
		if name != "" {
			prefix += " " + name
		}
		fmt.Fprintf(w, "%s: %s\n", prefix, msg)
	}
	var ue *usageError
	if errors.As(err, &ue) && ue.usage != "" {
		fmt.Fprintf(w, "\n%s", ue.usage)
	}
}
