package deploy_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/yaml"
)

// tmpRoot holds what the tests build once (the gpucost binary); TestMain removes it.
var tmpRoot string

func TestMain(m *testing.M) {
	var err error
	if tmpRoot, err = os.MkdirTemp("", "gpucost-deploy-test-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(tmpRoot)
	os.Exit(code)
}

// repoRoot is the repository root, the product module's (deploy/ is a module of its own below
// it): the tests run in deploy/.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the product module's root not found above deploy/: %v", err)
	}
	return root
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// gpucost returns the path of a gpucost binary built from this tree (once per test run).
func gpucost(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	buildOnce.Do(func() {
		binPath = filepath.Join(tmpRoot, "gpucost")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/gpucost")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/gpucost: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// cleanEnv is the test's environment without GPUCOST_* variables (the Makefile exports a DSN),
// plus extra ("KEY=value").
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GPUCOST_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// result is what a command did.
type result struct {
	stdout, stderr string
	code           int
}

// runIn runs name args in dir with env and returns its output and exit code; a command that
// cannot start fails the test.
func runIn(t *testing.T, dir string, env []string, name string, args ...string) result {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return r
}

// configPrint runs `gpucost config print` with env (on top of a clean environment) and
// returns the effective configuration; a non-zero exit fails the test with gpucost's message.
func configPrint(t *testing.T, what string, env ...string) effectiveConfig {
	t.Helper()
	r := runIn(t, tmpRoot, cleanEnv(env...), gpucost(t), "config", "print")
	if r.code != 0 {
		t.Fatalf("%s: gpucost config print rejects the configuration (exit %d):\n%s", what, r.code, r.stderr)
	}
	var c effectiveConfig
	if err := yaml.Unmarshal([]byte(r.stdout), &c); err != nil {
		t.Fatalf("%s: reading the output of gpucost config print: %v", what, err)
	}
	return c
}

// effectiveConfig is the part of `gpucost config print` the deployment files depend on. Keys a
// binary does not have yet decode as empty and the checks on them are skipped.
type effectiveConfig struct {
	Scrape struct {
		SpoolDir string `json:"spool_dir"`
	} `json:"scrape"`
	Providers map[string]struct {
		APIKeyEnv  string `json:"api_key_env"`
		APIKeyFile string `json:"api_key_file"`
	} `json:"providers"`
	Serve struct {
		Listen         string `json:"listen"`
		ScrapeSchedule string `json:"scrape_schedule"`
	} `json:"serve"`
	Optimize struct {
		Workloads string `json:"workloads"`
		Schedule  string `json:"schedule"`
	} `json:"optimize"`
	Report struct {
		Schedule string `json:"schedule"`
		OutDir   string `json:"out_dir"`
		SMTP     struct {
			PasswordEnv string `json:"password_env"`
		} `json:"smtp"`
	} `json:"report"`
}

// secretEnvNames are the environment variables that carry secrets under this configuration:
// the provider API keys and the SMTP password.
func (c effectiveConfig) secretEnvNames(subcommand string) []string {
	var names []string
	if subcommand == "scrape" || subcommand == "serve" {
		for _, p := range c.Providers {
			if p.APIKeyEnv != "" && p.APIKeyFile == "" {
				names = append(names, p.APIKeyEnv)
			}
		}
	}
	if (subcommand == "report" || subcommand == "serve") && c.Report.SMTP.PasswordEnv != "" {
		names = append(names, c.Report.SMTP.PasswordEnv)
	}
	return names
}

var (
	subcommandsOnce sync.Once
	subcommandSet   map[string]bool
)

// checkSubcommand checks that args run a real gpucost subcommand with flags it accepts: `gpucost
// ARGS... --help` must exit 0 (an unknown command or flag exits 2).
func checkSubcommand(t *testing.T, what string, args []string) {
	t.Helper()
	bin := gpucost(t)
	if len(args) == 0 {
		t.Errorf("%s: no gpucost subcommand (the image's CMD would run serve; say which)", what)
		return
	}
	subcommandsOnce.Do(func() {
		subcommandSet = map[string]bool{}
		r := runIn(t, tmpRoot, cleanEnv(), bin, "help")
		sc := bufio.NewScanner(strings.NewReader(r.stdout))
		in := false
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "Commands:", line == "Available Commands:": // cobra says the latter
				in = true
			case in && strings.HasPrefix(line, "  "):
				subcommandSet[strings.Fields(line)[0]] = true
			case in && strings.TrimSpace(line) == "":
				if len(subcommandSet) > 0 {
					in = false
				}
			}
		}
	})
	if len(subcommandSet) == 0 {
		t.Fatal("gpucost help lists no commands")
	}
	if !subcommandSet[args[0]] {
		t.Errorf("%s: %q is not a gpucost subcommand", what, strings.Join(args, " "))
		return
	}
	helpArgs := append(append([]string{}, args...), "--help")
	if r := runIn(t, tmpRoot, cleanEnv(), bin, helpArgs...); r.code != 0 {
		t.Errorf("%s: gpucost %s exits %d: %s", what, strings.Join(helpArgs, " "), r.code, strings.TrimSpace(r.stderr))
	}
}

// under reports whether path is dir or inside it.
func under(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}
