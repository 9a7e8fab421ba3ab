package service

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/web"
)

// TestJobMetricsExistFromTheStartAndCountEachRun reads /metrics as Prometheus does: before any
// job has run, every job has every series, at 0, and gpucost_build_info says which build runs;
// then each run is counted by its outcome, with the time of the last success or failure and
// its duration, and /healthz reports each job's last status.
func TestJobMetricsExistFromTheStartAndCountEachRun(t *testing.T) {
	cfg := defaultConfig(t)
	cfg.Serve.ScrapeSchedule = "0 0 1 1 *" // not during the test
	cfg.Serve.ScrapeOnStart = false
	cfg.Optimize.Schedule, cfg.Report.Schedule = "@every 1s", "@every 1s"
	srv, err := New(cfg, Deps{
		// No store: /healthz reports the jobs all the same.
		Open:   func(context.Context) (web.Store, error) { return nil, errors.New("no store in this test") },
		Scrape: Scrape{Config: pipeline.Config{SpoolDir: t.TempDir()}, Sources: providers(cfg.Scrape.Providers), Sink: discard{}, History: discard{}},
		Optimize: func(context.Context) (Result, error) {
			return Result{Outcome: OK, Status: "ok: 3 workloads, saves $1,200.00/month"}, nil
		},
		Report: func(context.Context) (Result, error) {
			return Result{Outcome: Partial}, errors.New("1 of 3 teams failed")
		},
		Version: "v1.2.3-test",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Schedule("fails", "@every 1s", func(context.Context) (Result, error) { return Result{}, errors.New("no store") }); err != nil {
		t.Fatal(err)
	}
	if err := srv.Schedule("boom", "@every 1s", func(context.Context) (Result, error) { panic("boom") }); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	jobs := []string{"boom", "fails", "optimize", "report", "scrape"}

	m := scrapeMetrics(t, ts.URL)
	for _, j := range jobs {
		for _, o := range outcomes {
			if v, ok := m[fmt.Sprintf(`gpucost_job_runs_total{job_name=%q,outcome=%q}`, j, o)]; !ok || v != 0 {
				t.Errorf("before any run: gpucost_job_runs_total of %s %s is %v (present %v), want 0", j, o, v, ok)
			}
		}
		for _, name := range []string{"gpucost_job_last_success_timestamp_seconds", "gpucost_job_last_failure_timestamp_seconds", "gpucost_job_duration_seconds_count"} {
			if v, ok := m[fmt.Sprintf(`%s{job_name=%q}`, name, j)]; !ok || v != 0 {
				t.Errorf("before any run: %s of %s is %v (present %v), want 0", name, j, v, ok)
			}
		}
	}
	build := ""
	for k, v := range m {
		if strings.HasPrefix(k, "gpucost_build_info{") {
			build = fmt.Sprintf("%s %v", k, v)
		}
	}
	if want := fmt.Sprintf(`gpucost_build_info{goversion=%q,revision="unknown",version="v1.2.3-test"} 1`, runtime.Version()); build != want {
		t.Errorf("build info %q, want %q (a test binary records no VCS revision)", build, want)
	}

	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ln, done := listen(t), make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	for _, s := range []string{`{job_name="optimize",outcome="ok"}`, `{job_name="report",outcome="partial"}`, `{job_name="fails",outcome="failed"}`, `{job_name="boom",outcome="panicked"}`} {
		waitMetric(t, ts.URL, "gpucost_job_runs_total"+s, 1, 10*time.Second)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	m = scrapeMetrics(t, ts.URL)
	since, until := float64(start.Unix()), float64(time.Now().Unix()+1)
	at := func(name, job string) float64 { return m[fmt.Sprintf(`%s{job_name=%q}`, name, job)] }
	for _, j := range []string{"boom", "fails", "optimize", "report"} {
		succeeded, failed := at("gpucost_job_last_success_timestamp_seconds", j), at("gpucost_job_last_failure_timestamp_seconds", j)
		wantSuccess := j == "optimize"
		if inRange := func(v float64) bool { return v >= since && v <= until }; inRange(succeeded) != wantSuccess || inRange(failed) == wantSuccess ||
			(wantSuccess && failed != 0) || (!wantSuccess && succeeded != 0) {
			t.Errorf("%s: last success %v, last failure %v; want the %s during the test (%v–%v) and the other 0", j, succeeded, failed,
				map[bool]string{true: "success", false: "failure"}[wantSuccess], since, until)
		}
		runs := 0.0
		for _, o := range outcomes {
			runs += m[fmt.Sprintf(`gpucost_job_runs_total{job_name=%q,outcome=%q}`, j, o)]
		}
		if n := at("gpucost_job_duration_seconds_count", j); n != runs || at("gpucost_job_duration_seconds_sum", j) > 10 {
			t.Errorf("%s: %v durations observed (sum %vs) for %v runs", j, n, at("gpucost_job_duration_seconds_sum", j), runs)
		}
	}
	for _, o := range outcomes {
		if v := m[fmt.Sprintf(`gpucost_job_runs_total{job_name="scrape",outcome=%q}`, o)]; v != 0 {
			t.Errorf("the scrape never ran, yet %v runs are counted %s", v, o)
		}
	}

	var h web.Health
	getJSON(t, ts.URL+"/healthz", &h)
	for job, want := range map[string]string{"optimize": "ok: 3 workloads, saves $1,200.00/month", "report": "partial", "fails": "failed", "boom": "panicked"} {
		if got := h.Jobs[job].LastStatus; got != want {
			t.Errorf("/healthz: %s last_status %q, want %q", job, got, want)
		}
	}
	if got := h.Jobs["report"].LastError; got != "1 of 3 teams failed" {
		t.Errorf("/healthz: report last_error %q", got)
	}
}

// scrapeMetrics reads url/metrics as Prometheus's text parser does and returns each sample by
// its series (name{label="value",...}, labels in name order; a histogram as its _count and
// _sum).
func scrapeMetrics(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	out := map[string]float64{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			sort.Strings(labels)
			series := "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.GetCounter() != nil:
				out[name+series] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				out[name+series] = m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				out[name+"_count"+series] = float64(m.GetHistogram().GetSampleCount())
				out[name+"_sum"+series] = m.GetHistogram().GetSampleSum()
			}
		}
	}
	return out
}

// listen returns a listener on a free loopback port.
func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}
