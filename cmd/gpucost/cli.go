package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/selection"
	"github.com/gpucost/gpucost/store"
)

// This file is the glue between gpucost's commands and cobra: the root command, usage errors,
// the flags many commands share (--config, --output, --quiet) and their shell completion.

const rootHelp = `gpucost: GPU prices from Vast.ai, RunPod, Lambda, CoreWeave, Verda, Oracle Cloud (OCI),
Vultr, Nebius, DigitalOcean, Hyperstack and TensorDock in ClickHouse, and the cheapest placement
of each workload.

Exit codes: 0 ok; 1 failed; 2 bad flags, arguments, configuration or input file; 3 partial (some
providers or teams failed, or batches wait in the spool); 4 another scrape holds the lock; 5
batches are in the spool's quarantine (docs/operations.md).`

// newRoot returns the gpucost command with every subcommand, writing to e. hooks reach into
// scrape (the fault-injection tests'); zero in gpucost itself.
func newRoot(e env, hooks scrapeHooks) *cobra.Command {
	root := &cobra.Command{
		Use:           "gpucost",
		Short:         "GPU prices in ClickHouse, and the cheapest placement of each workload",
		Long:          rootHelp,
		Version:       versionLine(),
		SilenceErrors: true, // printError prints them, once
		SilenceUsage:  true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				msg := fmt.Sprintf("unknown command %q (see gpucost help)", args[0])
				if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
					msg += "; did you mean " + strings.Join(s, " or ") + "?"
				}
				return &usageError{err: errors.New(msg)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return badUsageOf(cmd, "no command given")
		},
	}
	root.SetVersionTemplate("gpucost {{.Version}}\n")
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &usageError{err: err, usage: cmd.UsageString()}
	})
	root.SetHelpCommand(helpCommand())
	root.AddCommand(
		changesCommand(e), configCommand(e), exportCommand(e), gpusCommand(e), healthcheckCommand(e),
		historyCommand(e), importCommand(e), migrateCommand(e), offersCommand(e), optimizeCommand(e),
		reparseCommand(e), reportCommand(e), scrapeCommand(e, hooks), serveCommand(e), tcoCommand(e),
		versionCommand(e),
	)
	completionCommand(root)
	return root
}

// completionCommand adopts cobra's `completion bash|zsh|fish|powershell` into gpucost's
// conventions: a missing or unknown shell is a usage error.
func completionCommand(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		c.Short = "print the shell completion script of bash, zsh, fish or powershell"
		shells := make([]string, 0, len(c.Commands()))
		for _, sh := range c.Commands() {
			sh.Args = noArgs
			shells = append(shells, sh.Name())
		}
		want := orList(shells)
		c.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return badUsageOf(cmd, "no completion for %q: want %s", args[0], want)
			}
			return nil
		}
		c.RunE = func(cmd *cobra.Command, _ []string) error {
			return badUsageOf(cmd, "name the shell: %s", want)
		}
	}
}

// helpCommand is `gpucost help [COMMAND]`: cobra's, but an unknown topic is a usage error.
func helpCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "help [COMMAND]",
		Short: "print the help of gpucost or of a command",
		ValidArgsFunction: func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			var names []cobra.Completion
			for _, c := range cmd.Root().Commands() {
				if c.IsAvailableCommand() && len(args) == 0 {
					names = append(names, cobra.CompletionWithDesc(c.Name(), c.Short))
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			target, rest, err := cmd.Root().Find(args)
			if err != nil || target == nil || len(rest) > 0 {
				return badUsageOf(cmd.Root(), "no help for %q: not a gpucost command", strings.Join(args, " "))
			}
			return target.Help()
		},
	}
}

// versionLine is what --version and the version command print after "gpucost ".
func versionLine() string {
	return fmt.Sprintf("%s (%s, %s/%s)", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

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

// badUsageOf is badUsage followed by cmd's usage.
func badUsageOf(cmd *cobra.Command, format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...), usage: cmd.UsageString()}
}

// noArgs accepts no argument after the flags.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return badUsageOf(cmd, "unexpected argument %q", args[0])
	}
	return nil
}

// configFlag is the --config flag of every command that reads the configuration.
type configFlag struct{ path string }

// add adds --config to cmd.
func (c *configFlag) add(cmd *cobra.Command) { c.addTo(cmd.Flags()) }

// addTo adds --config to fs: a command's persistent flags give it to its subcommands too.
func (c *configFlag) addTo(fs *pflag.FlagSet) {
	fs.StringVar(&c.path, "config", "", "config file (default $GPUCOST_CONFIG, else the embedded defaults)")
	must(cobra.MarkFlagFilename(fs, "config", "yaml", "yml"))
}

// load loads the configuration: the embedded defaults, the file of --config or GPUCOST_CONFIG,
// then GPUCOST_* variables. Its secrets join the redactor first, whatever else fails. A bad
// configuration is a usage error.
func (c *configFlag) load(e env) (config.Config, error) {
	path := c.path
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

// openStore loads the configuration and opens its store, logging as it says.
func (c *configFlag) openStore(ctx context.Context, e env) (*store.Store, error) {
	cfg, err := c.load(e)
	if err != nil {
		return nil, err
	}
	return openStore(ctx, cfg.ClickHouse, store.Options{Logger: newLogger(e.stderr, cfg.Log)})
}

// openStore opens the store the configuration names, in cluster mode when it names a cluster.
func openStore(ctx context.Context, c config.ClickHouseConfig, opts store.Options) (*store.Store, error) {
	opts.Cluster = c.Cluster
	return store.Open(ctx, c.DSN, opts)
}

// outputFlag adds --output to cmd, into p: one of values, the first the default, completed by
// the shell. The check it returns is checkOutput of what --output was given, against values.
func outputFlag(cmd *cobra.Command, p *string, values ...string) (check func() error) {
	cmd.Flags().StringVar(p, "output", values[0], orList(values))
	completeFlag(cmd, "output", values...)
	return func() error { return checkOutput(*p, values...) }
}

// formatAlias makes --format another name of --output on cmd and its subcommands, for the
// scripts of the releases whose report and export said --format; help shows --output only.
func formatAlias(cmd *cobra.Command) {
	cmd.SetGlobalNormalizationFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "format" {
			name = "output"
		}
		return pflag.NormalizedName(name)
	})
}

// checkOutput returns a usage error unless output is one of values.
func checkOutput(output string, values ...string) error {
	for _, v := range values {
		if output == v {
			return nil
		}
	}
	return badUsage("--output %s: want %s", selection.Quote(output), orList(values))
}

// orList writes values as "a, b or c".
func orList(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

// completeFlag makes the shell complete flag name of cmd with values.
func completeFlag(cmd *cobra.Command, name string, values ...string) {
	must(cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)))
}

// completeList makes the shell complete a comma-separated list flag with values, item by item.
func completeList(cmd *cobra.Command, name string, values ...string) {
	must(cmd.RegisterFlagCompletionFunc(name, func(_ *cobra.Command, _ []string, typed string) ([]cobra.Completion, cobra.ShellCompDirective) {
		done := ""
		if i := strings.LastIndexByte(typed, ','); i >= 0 {
			done = typed[:i+1]
		}
		out := make([]cobra.Completion, len(values))
		for i, v := range values {
			out[i] = done + v
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}))
}

// completeSelection completes the selection flags cmd has: --gpu with the catalog's models,
// --provider and --providers with gpucost's providers, --price-type with the price types.
func completeSelection(cmd *cobra.Command) {
	if cmd.Flag("gpu") != nil {
		var models []string
		for _, m := range gpus.Models() {
			models = append(models, m.Name)
		}
		completeList(cmd, "gpu", models...)
	}
	for _, name := range []string{"provider", "providers"} {
		if cmd.Flag(name) != nil {
			completeList(cmd, name, config.ProviderNames...)
		}
	}
	if cmd.Flag("price-type") != nil {
		completeList(cmd, "price-type", names(schema.PriceTypes)...)
	}
}

// names are the values of a string enum, as text.
func names[T ~string](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

// must panics on an error that only a programming mistake makes (a flag registered twice).
func must(err error) {
	if err != nil {
		panic(err)
	}
}

// quietFlag adds --quiet to a cron job's command, into p; done says what succeeded means.
func quietFlag(cmd *cobra.Command, p *bool, done string) {
	cmd.Flags().BoolVar(p, "quiet", false, "print nothing when "+done+" (exit 0); print all of it on any other exit code (for cron)")
}

// quietly runs fn. With quiet set, what fn writes is held back and dropped when fn succeeds;
// when it fails (any exit code but 0), it is written out as it would have been, before the
// error. Without quiet fn writes as usual.
func quietly(e env, quiet bool, fn func(e env) error) error {
	if !quiet {
		return fn(e)
	}
	var out, errs bytes.Buffer
	held := e
	held.stdout, held.stderr, held.stdoutTTY, held.stderrTTY = &out, &errs, false, false
	err := fn(held)
	if exitCode(err) == exitOK {
		return err
	}
	if _, werr := out.WriteTo(e.stdout); werr != nil {
		return errors.Join(err, werr)
	}
	if _, werr := errs.WriteTo(e.stderr); werr != nil {
		return errors.Join(err, werr)
	}
	return err
}

// isTerminal reports whether f is a terminal (golang.org/x/term decides: /dev/null is a
// character device, not a terminal).
func isTerminal(f *os.File) bool {
	return term.IsTerminal(int(f.Fd()))
}
