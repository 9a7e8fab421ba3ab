package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/store"
)

// flags is a subcommand's flag set with the text its --help prints.
type flags struct {
	*flag.FlagSet
	synopsis, help string
	configPath     *string // --config, for commands that read the configuration
}

func newFlags(name, synopsis, help string) *flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parse reports errors itself
	fs.Usage = func() {}
	return &flags{FlagSet: fs, synopsis: synopsis, help: help}
}

// withConfig adds the --config flag of every command that reads the configuration.
func (f *flags) withConfig() {
	f.configPath = f.String("config", "", "config file (default $GPUCOST_CONFIG, else the embedded defaults)")
}

func (f *flags) usageText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: gpucost %s %s\n\n%s\n\nFlags:\n", f.Name(), f.synopsis, f.help)
	f.SetOutput(&b)
	f.PrintDefaults()
	f.SetOutput(io.Discard)
	return b.String()
}

// parse parses args, which must hold no more than nargs arguments after the flags (-1: any).
// --help prints the usage on stdout and ends the command with exit code 0; a bad flag or
// argument is a usage error that prints the usage on stderr.
func (f *flags) parse(e env, args []string, nargs int) error {
	err := f.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(e.stdout, f.usageText())
		return errHelpShown
	}
	if err == nil && nargs >= 0 && f.NArg() > nargs {
		err = fmt.Errorf("unexpected argument %q", f.Arg(nargs))
	}
	if err != nil {
		return &usageError{err: err, usage: f.usageText()}
	}
	return nil
}

// config loads the configuration: the embedded defaults, the file of --config or
// GPUCOST_CONFIG, then GPUCOST_* variables. Its secrets join the redactor first, whatever
// else fails. A bad configuration is a usage error.
func (f *flags) config(e env) (config.Config, error) {
	path := *f.configPath
	if path == "" {
		path = e.getenv("GPUCOST_CONFIG")
	}
	cfg, err := config.Load(path, e.getenv)
	passwords, apiKeys := cfg.Secrets(e.getenv)
	e.secrets.Add(passwords...)
	e.secrets.AddSent(apiKeys...)
	if err != nil {
		return cfg, &usageError{err: err}
	}
	return cfg, nil
}

// openStore opens the store of the configuration.
func (f *flags) openStore(ctx context.Context, e env) (*store.Store, error) {
	cfg, err := f.config(e)
	if err != nil {
		return nil, err
	}
	return openStore(ctx, cfg.ClickHouse, store.Options{Logger: newLogger(e)})
}

// openStore opens the store the configuration names, in cluster mode when it names a cluster.
func openStore(ctx context.Context, c config.ClickHouseConfig, opts store.Options) (*store.Store, error) {
	opts.Cluster = c.Cluster
	return store.Open(ctx, c.DSN, opts)
}

// newLogger returns the structured logger commands hand to the packages they call: warnings
// and errors, as text.
func newLogger(e env) *slog.Logger {
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
