// Package gpuusagetest gives integration tests a real Prometheus scraping GPUs of their own: an
// exporter that serves DCGM exporter metrics (DCGM_FI_DEV_GPU_UTIL per GPU, labelled as the DCGM
// exporter labels it, with the Kubernetes labels a test gives), registered with Prometheus for
// the test's lifetime under a job label of its own.
//
// The server is the local one of deploy/prometheus/local.sh (`make prometheus`; `make test`
// starts it), or GPUCOST_TEST_PROMETHEUS_URL. It discovers targets from the JSON files of a
// folder (file_sd): GPUCOST_TEST_PROMETHEUS_TARGETS, else the folder the server's own
// configuration names. The switch GPUCOST_INTEGRATION decides what happens when no server
// answers, as for ClickHouse (store/storetest): unset or "0" skips the test with a message,
// "1" fails it.
package gpuusagetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/model"
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

// GPU is one GPU an exporter serves.
type GPU struct {
	// Index, UUID, Model (as nvidia-smi names it) and Hostname label its series, as the DCGM
	// exporter labels them (gpu, UUID, modelName, Hostname); empty ones get a default.
	Index    int
	UUID     string
	Model    string
	Hostname string
	// Labels are the exporter's Kubernetes attribution: namespace, pod, container.
	Labels map[string]string
	// Util is DCGM_FI_DEV_GPU_UTIL: the share of the time a kernel ran, in percent (0–100).
	Util float64
}

// Exporter is a DCGM-style exporter Prometheus scrapes for one test.
type Exporter struct {
	// Job is its series' job label, unique to the test: put job="…" in a selector to read only
	// its GPUs.
	Job string
	// Prometheus is the URL of the server that scrapes it.
	Prometheus string
}

// Serve starts an exporter of gpus, registers it with the test Prometheus under a job of its
// own, and returns once Prometheus has scraped every GPU. The target is removed and the exporter
// stopped when tb ends.
func Serve(tb testing.TB, gpus ...GPU) Exporter {
	tb.Helper()
	prom := URL(tb)
	dir := targetsDir(tb, prom)
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatal(err)
	}
	job := "gpucost-test-" + hex.EncodeToString(b[:])

	srv := httptest.NewServer(promhttp.HandlerFor(registry(tb, gpus), promhttp.HandlerOpts{}))
	tb.Cleanup(srv.Close)
	target, err := json.Marshal([]map[string]any{{"targets": []string{strings.TrimPrefix(srv.URL, "http://")}, "labels": map[string]string{"job": job}}})
	if err != nil {
		tb.Fatal(err)
	}
	// Written under another name and renamed: Prometheus never reads half a file.
	file := filepath.Join(dir, job+".json")
	if err := os.WriteFile(file+".tmp", target, 0o644); err != nil {
		tb.Fatalf("registering the exporter with Prometheus: %v", err)
	}
	if err := os.Rename(file+".tmp", file); err != nil {
		tb.Fatalf("registering the exporter with Prometheus: %v", err)
	}
	tb.Cleanup(func() {
		if err := os.Remove(file); err != nil {
			tb.Errorf("removing the exporter's target: %v", err)
		}
	})
	waitScraped(tb, prom, dir, job, len(gpus))
	return Exporter{Job: job, Prometheus: prom}
}

// registry holds DCGM_FI_DEV_GPU_UTIL of each GPU, labelled as the DCGM exporter labels it.
func registry(tb testing.TB, gpus []GPU) *prometheus.Registry {
	tb.Helper()
	extra := map[string]bool{}
	for _, g := range gpus {
		for k := range g.Labels {
			extra[k] = true
		}
	}
	names := append([]string{"gpu", "UUID", "device", "modelName", "Hostname"}, slices.Sorted(maps.Keys(extra))...)
	util := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "DCGM_FI_DEV_GPU_UTIL", Help: "GPU utilization (in %)."}, names)
	for _, g := range gpus {
		values := prometheus.Labels{"gpu": strconv.Itoa(g.Index), "UUID": g.UUID, "device": "nvidia" + strconv.Itoa(g.Index), "modelName": g.Model, "Hostname": g.Hostname}
		if values["UUID"] == "" {
			values["UUID"] = fmt.Sprintf("GPU-%08x-0000-0000-0000-%012d", g.Index, g.Index)
		}
		if values["modelName"] == "" {
			values["modelName"] = "NVIDIA H100 80GB HBM3"
		}
		if values["Hostname"] == "" {
			values["Hostname"] = "node-1"
		}
		for k := range extra {
			values[k] = g.Labels[k] // "" when this GPU has none: no label
		}
		util.With(values).Set(g.Util)
	}
	reg := prometheus.NewRegistry()
	if err := reg.Register(util); err != nil {
		tb.Fatal(err)
	}
	return reg
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
	cfg, err := newAPI(tb, prom).Config(ctx)
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

// waitScraped waits until Prometheus holds a sample of each of the job's n GPUs.
func waitScraped(tb testing.TB, prom, dir, job string, n int) {
	tb.Helper()
	a := newAPI(tb, prom)
	query := fmt.Sprintf(`count(DCGM_FI_DEV_GPU_UTIL{job=%q})`, job)
	deadline := time.Now().Add(30 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		v, _, _, err := a.Query(ctx, query, time.Now())
		cancel()
		switch vec, _ := v.(model.Vector); {
		case err != nil:
			last = err.Error()
		case len(vec) == 1 && int(vec[0].Value) == n:
			return
		default:
			last = fmt.Sprintf("%s = %v", query, v)
		}
		time.Sleep(200 * time.Millisecond)
	}
	tb.Fatalf("Prometheus at %s has not scraped the exporter of job %s within 30 s (does it read file_sd targets from %s?): %s", prom, job, dir, last)
}

func newAPI(tb testing.TB, prom string) v1.API {
	tb.Helper()
	c, err := api.NewClient(api.Config{Address: prom})
	if err != nil {
		tb.Fatal(err)
	}
	return v1.NewAPI(c)
}
