package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpucost/gpucost/config"
)

// TestStateDir: the folders a configuration leaves empty go where a system service or a user
// expects state, never into the folder gpucost runs in.
func TestStateDir(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		root bool
		want string // "" an error
	}{
		{"systemd's StateDirectory= wins", map[string]string{"STATE_DIRECTORY": "/var/lib/gpucost-a:/var/lib/other", "XDG_STATE_HOME": "/x", "HOME": "/home/u"}, true, "/var/lib/gpucost-a"},
		{"root", map[string]string{"HOME": "/root", "XDG_STATE_HOME": "/root/.state"}, true, "/var/lib/gpucost"},
		{"a user with XDG_STATE_HOME", map[string]string{"XDG_STATE_HOME": "/home/u/.state", "HOME": "/home/u"}, false, "/home/u/.state/gpucost"},
		{"a user", map[string]string{"HOME": "/home/u"}, false, "/home/u/.local/state/gpucost"},
		{"relative paths are ignored", map[string]string{"STATE_DIRECTORY": "state", "XDG_STATE_HOME": ".state", "HOME": "/home/u"}, false, "/home/u/.local/state/gpucost"},
		{"nowhere", map[string]string{"HOME": "home"}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := config.StateDir(func(k string) string { return tc.env[k] }, tc.root)
			if got != tc.want || (err == nil) != (tc.want != "") {
				t.Errorf("StateDir = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestDefaultPathsDoNotDependOnTheWorkingDirectory: the embedded defaults place the spool and
// the report folder in the state folder, absolute; a file or a variable names others.
func TestDefaultPathsDoNotDependOnTheWorkingDirectory(t *testing.T) {
	state := t.TempDir()
	env := map[string]string{"STATE_DIRECTORY": state}
	cfg, err := config.Load("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Scrape.SpoolDir != filepath.Join(state, "spool") || cfg.Report.OutDir != filepath.Join(state, "reports") {
		t.Errorf("spool %s, reports %s; want both in %s", cfg.Scrape.SpoolDir, cfg.Report.OutDir, state)
	}
	if cfg.Optimize.Workloads != "" {
		t.Errorf("optimize.workloads %q by default, want none (the sample teams built in)", cfg.Optimize.Workloads)
	}
	file := filepath.Join(t.TempDir(), "gpucost.yaml")
	if err := os.WriteFile(file, []byte("scrape:\n  spool_dir: /srv/spool\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env["GPUCOST_REPORT_OUT_DIR"] = "/srv/reports"
	if cfg, err = config.Load(file, func(k string) string { return env[k] }); err != nil || cfg.Scrape.SpoolDir != "/srv/spool" || cfg.Report.OutDir != "/srv/reports" {
		t.Errorf("spool %s, reports %s (%v); want the file's and the variable's", cfg.Scrape.SpoolDir, cfg.Report.OutDir, err)
	}
}

// TestLogSettings: log.level and log.format take their documented values, from a file or the
// environment; anything else is an error naming the key.
func TestLogSettings(t *testing.T) {
	// The state folder the defaults need is the test's own, whoever runs it (root or not, with
	// $HOME or without).
	state := t.TempDir()
	cfg, err := config.Load("", func(k string) string {
		if k == "STATE_DIRECTORY" {
			return state
		}
		return ""
	})
	if err != nil || cfg.Log.Level != "info" || cfg.Log.Format != "text" {
		t.Fatalf("defaults: %+v (%v), want info and text", cfg.Log, err)
	}
	env := map[string]string{"GPUCOST_LOG_LEVEL": "debug", "GPUCOST_LOG_FORMAT": "json", "STATE_DIRECTORY": state}
	if cfg, err = config.Load("", func(k string) string { return env[k] }); err != nil || cfg.Log.Level != "debug" || cfg.Log.Format != "json" {
		t.Errorf("from the environment: %+v (%v)", cfg.Log, err)
	}
	for k, v := range map[string]string{"GPUCOST_LOG_LEVEL": "verbose", "GPUCOST_LOG_FORMAT": "logfmt"} {
		_, err := config.Load("", func(key string) string {
			if key == k {
				return v
			}
			return ""
		})
		key := strings.ToLower(strings.TrimPrefix(strings.Replace(k, "_", ".", 2), "GPUCOST."))
		if err == nil || !strings.Contains(err.Error(), "environment variable "+k+": "+key+": \""+v+"\" is not one of") {
			t.Errorf("%s=%s: %v", k, v, err)
		}
	}
}
