// Package promtest gives integration tests a real Prometheus: the local server of
// deploy/prometheus/local.sh (`make prometheus`; `make test` starts it), or
// GPUCOST_TEST_PROMETHEUS_URL; targets registered with it for a test's lifetime; and its query
// API. The server discovers targets from the JSON files of a folder (file_sd):
// GPUCOST_TEST_PROMETHEUS_TARGETS, else the folder its own configuration names. The switch
// GPUCOST_INTEGRATION decides what happens when no server answers, as for ClickHouse
// (store/storetest): unset or "0" skips the test with a message, "1" fails it.
package promtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
)

// DefaultURL is the local server of deploy/prometheus/local.sh.
const DefaultURL = "http://127.0.0.1:19090"

// Enabled skips tb unless integration tests are switched on (GPUCOST_INTEGRATION=1).
func Enabled(tb testing.TB) {
	tb.Helper()
	switch os.Getenv("GPUCOST_INTEGRATION") {
	case "1":
	case "0":
		tb.Skip("Prometheus integration tests are off (GPUCOST_INTEGRATION=0)")
	default:
		tb.Skip("Prometheus integration test: set GPUCOST_INTEGRATION=1 with a server running (deploy/prometheus/local.sh start; make test does both)")
	}
}

// URL returns the test server's URL once it answers; it fails tb when it does not.
func URL(tb testing.TB) string {
	tb.Helper()
	Enabled(tb)
	u := os.Getenv("GPUCOST_TEST_PROMETHEUS_URL")
	if u == "" {
		u = DefaultURL
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(u, "/")+"/-/ready", nil)
	if err != nil {
		tb.Fatalf("GPUCOST_TEST_PROMETHEUS_URL %q: %v", u, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("the test Prometheus at %s does not answer (is it running? deploy/prometheus/local.sh start): %v", u, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("the test Prometheus at %s is not ready: HTTP %d", u, resp.StatusCode)
	}
	return u
}

// API is the query API of the Prometheus at prom.
func API(tb testing.TB, prom string) v1.API {
	tb.Helper()
	c, err := api.NewClient(api.Config{Address: prom})
	if err != nil {
		tb.Fatal(err)
	}
	return v1.NewAPI(c)
}

// UniqueJob returns a job label no other test uses: put job="…" in a query to read only the
// series of one test's targets.
func UniqueJob(tb testing.TB) string {
	tb.Helper()
	return uniqueName(tb)
}

// uniqueName returns a name no other test uses: gpucost-test- and 12 random hex digits.
func uniqueName(tb testing.TB) string {
	tb.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatal(err)
	}
	return "gpucost-test-" + hex.EncodeToString(b[:])
}

// Register has the Prometheus at prom scrape http://addr/metrics (addr is host:port) under the
// given target labels (a job from UniqueJob, say) until tb ends. It returns at once: the
// server picks the target up within its file_sd refresh, a few seconds.
func Register(tb testing.TB, prom, addr string, labels map[string]string) {
	tb.Helper()
	dir := targetsDir(tb, prom)
	target, err := json.Marshal([]map[string]any{{"targets": []string{addr}, "labels": labels}})
	if err != nil {
		tb.Fatal(err)
	}
	// Written under another name and renamed: Prometheus never reads half a file.
	file := filepath.Join(dir, uniqueName(tb)+".json")
	if err := os.WriteFile(file+".tmp", target, 0o644); err != nil {
		tb.Fatalf("registering %s with Prometheus: %v", addr, err)
	}
	if err := os.Rename(file+".tmp", file); err != nil {
		tb.Fatalf("registering %s with Prometheus: %v", addr, err)
	}
	tb.Cleanup(func() {
		if err := os.Remove(file); err != nil {
			tb.Errorf("removing the target %s: %v", addr, err)
		}
	})
}

// targetsDir is the folder the server reads file_sd targets from: GPUCOST_TEST_PROMETHEUS_TARGETS,
// else the folder of the first file_sd pattern of its configuration.
func targetsDir(tb testing.TB, prom string) string {
	tb.Helper()
	if dir := os.Getenv("GPUCOST_TEST_PROMETHEUS_TARGETS"); dir != "" {
		return dir
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg, err := API(tb, prom).Config(ctx)
	if err != nil {
		tb.Fatalf("reading the test Prometheus's configuration: %v", err)
	}
	var parsed struct {
		ScrapeConfigs []struct {
			FileSDConfigs []struct {
				Files []string `yaml:"files"`
			} `yaml:"file_sd_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal([]byte(cfg.YAML), &parsed); err != nil {
		tb.Fatalf("reading the test Prometheus's configuration: %v", err)
	}
	for _, sc := range parsed.ScrapeConfigs {
		for _, sd := range sc.FileSDConfigs {
			for _, f := range sd.Files {
				if strings.HasSuffix(f, "*.json") {
					return filepath.Dir(f)
				}
			}
		}
	}
	tb.Fatalf("the test Prometheus at %s reads no file_sd targets (*.json): start the one of deploy/prometheus/local.sh, or set GPUCOST_TEST_PROMETHEUS_TARGETS", prom)
	return ""
}
