// Package gpuusagetest gives integration tests a real Prometheus scraping GPUs of their own: an
// exporter that serves DCGM exporter metrics (DCGM_FI_DEV_GPU_UTIL per GPU, labelled as the DCGM
// exporter labels it, with the Kubernetes labels a test gives), registered with the test
// Prometheus of package promtest for the test's lifetime under a job label of its own.
package gpuusagetest

import (
	"context"
	"fmt"
	"maps"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/model"

	"github.com/gpucost/gpucost/promtest"
)

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
	prom := promtest.URL(tb)
	job := promtest.UniqueJob(tb)
	srv := httptest.NewServer(promhttp.HandlerFor(registry(tb, gpus), promhttp.HandlerOpts{}))
	tb.Cleanup(srv.Close)
	promtest.Register(tb, prom, strings.TrimPrefix(srv.URL, "http://"), map[string]string{"job": job})
	waitScraped(tb, prom, job, len(gpus))
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

// waitScraped waits until Prometheus holds a sample of each of the job's n GPUs.
func waitScraped(tb testing.TB, prom, job string, n int) {
	tb.Helper()
	a := promtest.API(tb, prom)
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
	tb.Fatalf("Prometheus at %s has not scraped the exporter of job %s within 30 s: %s", prom, job, last)
}
