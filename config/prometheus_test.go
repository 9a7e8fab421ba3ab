package config

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpucost/gpucost/gpuusage"
)

// TestPrometheusConfig: measuring is off by default with the default query and a week's
// window; a file or the environment turns it on; every bad value names the file and line and
// the key; the token is read from its variable or file, listed as a secret, and never printed.
func TestPrometheusConfig(t *testing.T) {
	onlyState := stateOnly(t)
	def, err := Load("", onlyState)
	if err != nil {
		t.Fatal(err)
	}
	p := def.Prometheus
	if p.URL != "" || p.Query != gpuusage.DefaultQuery || p.Window.Std() != 7*24*time.Hour || p.Timeout.Std() != 30*time.Second || p.BearerTokenEnv != "GPUCOST_PROMETHEUS_TOKEN" {
		t.Errorf("defaults %+v: want measuring off, gpuusage.DefaultQuery over 168h, 30s, GPUCOST_PROMETHEUS_TOKEN", p)
	}

	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("good.yaml", "prometheus:\n  url: http://prometheus:9090\n  window: 24h\n")
	cfg, err := Load(good, func(k string) string { return map[string]string{"GPUCOST_PROMETHEUS_TIMEOUT": "5s"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Prometheus; p.URL != "http://prometheus:9090" || p.Window.Std() != 24*time.Hour || p.Timeout.Std() != 5*time.Second {
		t.Errorf("file and environment: %+v", p)
	}

	for _, tt := range []struct {
		name, yaml, want string
	}{
		{"not a URL", "prometheus:\n  url: prometheus:9090\n", `:2: prometheus.url: "prometheus:9090" is not an http(s):// URL`},
		{"a password in the URL", "prometheus:\n  url: http://u:hunter22@prometheus:9090\n", ":2: prometheus.url: holds a user or password: give a bearer token"},
		{"a query without the selector", "prometheus:\n  query: avg_over_time(DCGM_FI_DEV_GPU_UTIL[$window]) / 100\n", ":2: prometheus.query: query \"avg_over_time(DCGM_FI_DEV_GPU_UTIL[$window]) / 100\" has no $selector"},
		{"a Grafana variable", "prometheus:\n  query: 'avg_over_time(DCGM_FI_DEV_GPU_UTIL{$selector}[$__rate_interval]) / 100 + $window'\n", ":2: prometheus.query: query \"avg_over_time(DCGM_FI_DEV_GPU_UTIL{$selector}[$__rate_interval]) / 100 + $window\": unknown variable $__rate_interval"},
		{"no window", "prometheus:\n  url: http://prometheus:9090\n  window: 0s\n", ":3: prometheus.window: must be positive, not 0s"},
		{"a window finer than PromQL's", "prometheus:\n  window: 1500us\n", ":2: prometheus.window: 1.5ms is finer than PromQL's milliseconds"},
		{"a negative timeout", "prometheus:\n  timeout: -1s\n", ":2: prometheus.timeout: must be positive, not -1s"},
		{"a bad duration", "prometheus:\n  window: a week\n", `:2:11: invalid duration "a week"`},
		{"a token variable name", "prometheus:\n  bearer_token_env: \"PROM TOKEN\"\n", `:2: prometheus.bearer_token_env: "PROM TOKEN" is not an environment variable name`},
		{"an unknown key", "prometheus:\n  bearer_token: s3cret-token\n", `:2:3: unknown field "bearer_token"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := write(strings.ReplaceAll(tt.name, " ", "-")+".yaml", tt.yaml)
			_, err := Load(path, onlyState)
			if want := "config " + path + tt.want; err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v\nwant it to contain %q", err, want)
			}
			if err != nil && strings.Contains(err.Error(), "hunter22") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}

	// The token: from the variable, or from the file, which wins; a secret sent (scrubbed from
	// data too), and never printed.
	const fromEnv, fromFile = "token-from-env-0001", "token-from-file-0002"
	env := func(k string) string { return map[string]string{"GPUCOST_PROMETHEUS_TOKEN": fromEnv}[k] }
	for _, tt := range []struct {
		file, want string
	}{{"", fromEnv}, {write("token", fromFile+"\n"), fromFile}} {
		c := def
		c.Prometheus.BearerTokenFile = tt.file
		if got, err := c.Prometheus.BearerToken(env); err != nil || got != tt.want {
			t.Errorf("token file %q: %q, %v; want %q", tt.file, got, err, tt.want)
		}
		if _, sent := c.Secrets(env); !strings.Contains(strings.Join(sent, " "), tt.want) {
			t.Errorf("token file %q: the secrets sent %q lack the token", tt.file, sent)
		}
		var out bytes.Buffer
		if err := WriteEffective(&out, c, env, func(s string) string { return s }); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out.String(), tt.want) || !strings.Contains(out.String(), "# Prometheus bearer token: set (masked)") {
			t.Errorf("config print:\n%s", out.String())
		}
	}
	c := def
	c.Prometheus.BearerTokenFile = filepath.Join(dir, "missing-token")
	if _, err := c.Prometheus.BearerToken(env); err == nil || !strings.Contains(err.Error(), "reading the prometheus.bearer_token file") {
		t.Errorf("a missing token file: %v", err)
	}
}
