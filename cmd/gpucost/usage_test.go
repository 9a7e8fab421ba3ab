package main

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/gpucost/gpucost/gpuusage/gpuusagetest"
	"github.com/gpucost/gpucost/optimizer"
)

// TestOptimizeReadsUtilizationFromPrometheus plans the sample teams on the shipped snapshot with
// a real Prometheus scraping a DCGM-style exporter: the 8 H100s of search's assistant-70b
// (4–20%, 12% on average) and the one A100 of its chat-7b (idle). The two workloads with a
// metrics_selector are measured, the plan carries each measurement and says it in the team's
// words; the others get nothing. With Prometheus down the plan is made all the same, and the
// two measured workloads say why they were not measured.
func TestOptimizeReadsUtilizationFromPrometheus(t *testing.T) {
	ex := gpuusagetest.Serve(t, searchGPUs()...)

	x := newE2E(t, nil)
	cfg := x.writeConfig(measuredSampleTeams(ex.Prometheus, ex.Job))
	if code, out := runCLI("scrape", "--replay", snapshotDir, "--config", cfg); code != exitOK {
		t.Fatalf("scrape: exit %d\n%s", code, out)
	}
	items := optimizeJSON(t, cfg)
	measured := map[string]*optimizer.PlanItem{}
	for i, w := range items {
		if w.MeasuredUtilization != nil || slices.ContainsFunc(w.Advice, func(a optimizer.Advice) bool { return a.Kind == optimizer.AdviceUtilization }) {
			measured[w.Team+"/"+w.Workload] = &items[i]
		}
	}
	if len(measured) != 2 {
		t.Errorf("measured workloads %v, want search/assistant-70b and search/chat-7b", slices.Sorted(maps.Keys(measured)))
	}
	for name, want := range map[string]struct {
		share  float64
		gpus   int
		advice string
	}{
		"search/assistant-70b": {0.12, 8, "Your 8 H100-SXM-80GB averaged 12% busy over the 30 seconds to "},
		"search/chat-7b":       {0, 1, "Your A100-SXM-80GB averaged 0% busy over the 30 seconds to "},
	} {
		w := measured[name]
		if w == nil {
			continue
		}
		if m := w.MeasuredUtilization; m == nil || m.Share != want.share || m.GPUs != want.gpus || m.To.Sub(m.From).Seconds() != 30 {
			t.Errorf("%s: measured %+v, want %.2f over %d GPUs in 30 s", name, m, want.share, want.gpus)
		}
		var texts []string
		for _, a := range w.Advice {
			if a.Kind == optimizer.AdviceUtilization {
				texts = append(texts, a.Text)
			}
		}
		if len(texts) != 1 || !strings.HasPrefix(texts[0], want.advice) {
			t.Errorf("%s: utilization advice %q, want one starting %q", name, texts, want.advice)
		}
		if name == "search/chat-7b" && len(texts) == 1 && !strings.Contains(texts[0], "It did no work: shut it down") {
			t.Errorf("the idle chat service: %s", texts[0])
		}
	}

	// Prometheus down: the plan is made, the two workloads say why they were not measured, and
	// the failures are logged.
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + closed.Addr().String()
	closed.Close()
	const token = "prom-bearer-token-5ee1"
	code, out := runCLIEnv(map[string]string{"GPUCOST_PROMETHEUS_TOKEN": token}, "optimize", "--output", "json", "--no-store", "--config", x.writeConfig(measuredSampleTeams(down, ex.Job)))
	if code != exitOK {
		t.Fatalf("optimize with Prometheus down: exit %d\n%s", code, out)
	}
	if strings.Contains(out, token) {
		t.Errorf("the output shows the bearer token:\n%s", out)
	}
	if n := strings.Count(out, `"utilization not measured: reading the GPU utilization of {namespace=\"search\",pod=~\"`); n != 2 {
		t.Errorf("%d caveats say a workload was not measured, want 2:\n%s", n, out)
	}
	if n := strings.Count(out, "GPU utilization not measured"); n != 2 || !strings.Contains(out, "unreachable: dial tcp "+closed.Addr().String()) {
		t.Errorf("%d failures logged, want 2 saying Prometheus is unreachable:\n%s", n, out)
	}
}

// measuredSampleTeams is the configuration of the sample teams measured by the Prometheus at
// url: the query keeps to the exporter of job (other tests serve search's pods too), and the
// window is the half minute the exporter has been scraped.
func measuredSampleTeams(url, job string) string {
	return fmt.Sprintf("optimize:\n  workloads: ../../plans/workloads.sample.yaml\nprometheus:\n  url: %s\n  window: 30s\n  timeout: 5s\n"+
		"  query: avg_over_time(DCGM_FI_DEV_GPU_UTIL{job=\"%s\",$selector}[$window]) / 100\n", url, job)
}

// searchGPUs are the sample team search's GPUs as the DCGM exporter shows them: the 8 H100s of
// assistant-70b, 4–20% busy (12% on average), and the one A100 of chat-7b, idle. The sample
// workloads' metrics_selector picks each workload's pods.
func searchGPUs() []gpuusagetest.GPU {
	var gpus []gpuusagetest.GPU
	for i, util := range []float64{4, 8, 12, 16, 10, 14, 20, 12} {
		gpus = append(gpus, gpuusagetest.GPU{Index: i, Util: util, Hostname: "node-7",
			Labels: map[string]string{"namespace": "search", "pod": "assistant-70b-0", "container": "vllm"}})
	}
	return append(gpus, gpuusagetest.GPU{Index: 0, Util: 0, Model: "NVIDIA A100-SXM4-80GB", Hostname: "node-3",
		Labels: map[string]string{"namespace": "search", "pod": "chat-7b-5d9c-x2", "container": "vllm"}})
}
