package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// runOut runs gpucost in-process with no environment and returns its exit code, stdout and
// stderr apart.
func runOut(args ...string) (int, string, string) { return runEnvOut(nil, args...) }

// runEnvOut is runOut with environment variables.
func runEnvOut(vars map[string]string, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	e := env{stdout: &stdout, stderr: &stderr, getenv: isolated(testState, func(k string) string { return vars[k] })}
	code := run(context.Background(), e, args)
	return code, stdout.String(), stderr.String()
}

// TestHelp: `gpucost help CMD`, `gpucost CMD --help` and `gpucost help` print on stdout, exit 0;
// a command's help is its own (its long text, then its flags), not the top-level one.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help", "offers"}, {"offers", "--help"}, {"offers", "-h"}} {
		code, out, errOut := runOut(args...)
		if code != exitOK || errOut != "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
		if !strings.HasPrefix(out, "List the current market from the store") || !strings.Contains(out, "Usage:\n  gpucost offers [flags]") ||
			!strings.Contains(out, "--cheapest-per-gpu") || strings.Contains(out, "Available Commands") {
			t.Errorf("%v does not print offers' help:\n%s", args, out)
		}
	}
	code, out, _ := runOut("help", "export", "history")
	if code != exitOK || !strings.Contains(out, "gpucost export history --gpu MODEL") || !strings.Contains(out, "--interval string") {
		t.Errorf("help export history: exit %d\n%s", code, out)
	}
	code, out, _ = runOut("help")
	if code != exitOK || !strings.Contains(out, "Exit codes: 0 ok") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
	// Every command is listed with its summary.
	for _, c := range newRoot(env{}, scrapeHooks{}).Commands() {
		if !regexp.MustCompile(`(?m)^  ` + c.Name() + `\s+\S`).MatchString(out) {
			t.Errorf("help does not list %s:\n%s", c.Name(), out)
		}
	}
}

// TestFlagsAreDoubleDash: every command's help renders its flags as --name (pflag), the way the
// docs write them, never Go's single-dash -name; and each command's help starts with its own
// text.
func TestFlagsAreDoubleDash(t *testing.T) {
	singleDash := regexp.MustCompile(`(?m)^\s+-[a-z][a-z-]+\b`)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		args := append(strings.Fields(c.CommandPath())[1:], "--help")
		code, out, _ := runOut(args...)
		if code != exitOK {
			t.Errorf("%v: exit %d", args, code)
			return
		}
		if m := singleDash.FindString(out); m != "" {
			t.Errorf("%v: a single-dash flag %q:\n%s", args, m, out)
		}
		if c.Flags().Lookup("config") != nil && !strings.Contains(out, "--config string") {
			t.Errorf("%v: no --config string:\n%s", args, out)
		}
	}
	walk(newRoot(env{}, scrapeHooks{}))
}

// TestVersion: --version and the version command print the same line: the version stamped at
// build time (-X main.version), the Go it was built with, the platform.
func TestVersion(t *testing.T) {
	defer func(v string) { version = v }(version)
	version = "v1.2.3-test"
	want := "gpucost v1.2.3-test (" + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"
	for _, args := range [][]string{{"--version"}, {"version"}, {"-v"}} {
		if code, out, errOut := runOut(args...); code != exitOK || out != want || errOut != "" {
			t.Errorf("%v: exit %d, %q (stderr %q), want %q", args, code, out, errOut, want)
		}
	}
}

// TestUsageErrors: a bad command line exits 2 with the message and the usage on stderr, and
// nothing on stdout.
func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"no command", nil, "gpucost: no command given"},
		{"an unknown command", []string{"scrap"}, `gpucost: unknown command "scrap" (see gpucost help); did you mean scrape?`},
		{"an unknown flag", []string{"offers", "--bogus"}, "gpucost offers: unknown flag: --bogus"},
		{"a single-dash long flag", []string{"offers", "-output", "json"}, "gpucost offers: unknown shorthand flag: 'o' in -output"},
		{"a flag without its value", []string{"history", "--gpu"}, "gpucost history: flag needs an argument: --gpu"},
		{"a bad number", []string{"offers", "--limit", "many"}, `gpucost offers: invalid argument "many" for "--limit" flag`},
		{"an argument too many", []string{"offers", "H100"}, `gpucost offers: unexpected argument "H100"`},
		{"a bad output", []string{"scrape", "--output", "yaml"}, `gpucost scrape: --output "yaml": want table, json or csv`},
		{"config without print", []string{"config"}, "gpucost config: want the subcommand print"},
		{"export without a kind", []string{"export"}, "gpucost export: want offers or history, got nothing"},
		{"completion without a shell", []string{"completion"}, "gpucost completion: name the shell: bash, fish, powershell or zsh"},
		{"completion of another shell", []string{"completion", "tcsh"}, `gpucost completion: no completion for "tcsh"`},
		{"help on nothing known", []string{"help", "nosuch"}, `gpucost help: no help for "nosuch"`},
		{"quiet where the report is the output", []string{"report", "--quiet"}, "gpucost report: --quiet goes with --email or --out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runOut(tc.args...)
			if code != exitUsage || out != "" || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit %d, no stdout, %q", code, out, errOut, exitUsage, tc.want)
			}
		})
	}
	// A flag error is followed by the command's usage.
	if _, _, errOut := runOut("offers", "--bogus"); !strings.Contains(errOut, "\nUsage:\n  gpucost offers [flags]\n") || !strings.Contains(errOut, "--output string") {
		t.Errorf("a flag error without the usage:\n%s", errOut)
	}
}

// TestCompletion: `gpucost completion SHELL` prints a script bash accepts; the completions it
// asks gpucost for (the hidden __complete command) offer subcommands, flags, the values of enum
// flags and the catalog's GPU models.
func TestCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash is needed to check the completion script: ", err)
	}
	code, script, errOut := runOut("completion", "bash")
	if code != exitOK || errOut != "" || !strings.Contains(script, "__complete") {
		t.Fatalf("completion bash: exit %d, stderr %q", code, errOut)
	}
	file := filepath.Join(t.TempDir(), "gpucost.bash")
	if err := os.WriteFile(file, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bash, "-n", file).CombinedOutput(); err != nil {
		t.Errorf("bash -n rejects the completion script: %v\n%s", err, out)
	}
	// Sourced, it registers a completion for gpucost.
	if out, err := exec.Command(bash, "-c", ". "+file+" && complete -p gpucost").CombinedOutput(); err != nil || !strings.Contains(string(out), "gpucost") {
		t.Errorf("sourcing the script registers no completion for gpucost: %v\n%s", err, out)
	}
	for _, shell := range []string{"zsh", "fish", "powershell"} {
		if code, out, _ := runOut("completion", shell); code != exitOK || !strings.Contains(out, "__complete") {
			t.Errorf("completion %s: exit %d, %d bytes", shell, code, len(out))
		}
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"sc"}, []string{"scrape"}},
		{[]string{"offers", "--out"}, []string{"--output"}},
		{[]string{"offers", "--output", ""}, []string{"table", "json", "csv"}},
		{[]string{"optimize", "--output", ""}, []string{"table", "json", "csv", "markdown"}},
		{[]string{"history", "--interval", ""}, []string{"hour", "day", "week"}},
		{[]string{"offers", "--gpu", "H100-S"}, []string{"H100-SXM-80GB"}},
		{[]string{"offers", "--provider", "lambda,"}, []string{"lambda,runpod", "lambda,vastai"}},
		{[]string{"export", "offers", "--output", ""}, []string{"csv", "parquet", "ndjson"}},
		{[]string{"export", "history", "--compression", ""}, []string{"snappy", "zstd"}},
		{[]string{"completion", ""}, []string{"bash", "zsh", "fish"}},
		{[]string{"help", "off"}, []string{"offers"}},
	} {
		code, out, _ := runOut(append([]string{"__complete"}, tc.args...)...)
		var got []string
		for _, line := range strings.Split(out, "\n") {
			if line != "" && !strings.HasPrefix(line, ":") {
				got = append(got, strings.SplitN(line, "\t", 2)[0])
			}
		}
		for _, w := range tc.want {
			if code != exitOK || !slices.Contains(got, w) {
				t.Errorf("completing %q: exit %d, %v; want %s among them", tc.args, code, got, w)
			}
		}
	}
}
