package deploy_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"

	"github.com/gpucost/gpucost/promtest"
	"github.com/gpucost/gpucost/store/storetest"
)

// TestAlertsOnServeMetricsInPrometheus runs gpucost serve (the binary) on a migrated ClickHouse
// database, with the nightly plan and the weekly report every 20 seconds and a mail server that
// refuses connections, and has the test Prometheus scrape it as the alert rules expect (one job
// label for serve). Prometheus must see every job's series with its job_name label from the
// first scrape, at 0 before any run, and gpucost_build_info; then the rules of alerts.yaml,
// evaluated by Prometheus on those series, must say what they say of a report that failed and a
// plan that ran: GpucostReportFailed and nothing else.
func TestAlertsOnServeMetricsInPrometheus(t *testing.T) {
	prom := promtest.URL(t)
	bin := gpucost(t)
	dsn := storetest.DSN(t)
	if r := runIn(t, tmpRoot, cleanEnv("GPUCOST_CLICKHOUSE_DSN="+dsn), bin, "migrate"); r.code != 0 {
		t.Fatalf("gpucost migrate: exit %d\n%s", r.code, r.stderr)
	}
	addr, refused := freeAddr(t), freeAddr(t)
	_, smtpPort, _ := net.SplitHostPort(refused)
	dir := t.TempDir()
	workloads := filepath.Join(dir, "workloads.yaml")
	if err := os.WriteFile(workloads, []byte(oneTeam), 0o644); err != nil {
		t.Fatal(err)
	}
	serve := startServe(t, bin,
		"GPUCOST_CLICKHOUSE_DSN="+dsn,
		"GPUCOST_SERVE_LISTEN="+addr,
		"GPUCOST_SERVE_SCRAPE_SCHEDULE=0 0 1 1 *", // no scrape during the test: its series stay at 0
		"GPUCOST_SERVE_SCRAPE_ON_START=false",
		"GPUCOST_SCRAPE_SPOOL_DIR="+filepath.Join(dir, "spool"),
		"GPUCOST_OPTIMIZE_SCHEDULE=@every 20s",
		"GPUCOST_OPTIMIZE_WORKLOADS="+workloads,
		"GPUCOST_REPORT_SCHEDULE=@every 20s",
		"GPUCOST_REPORT_OUT_DIR="+filepath.Join(dir, "reports"),
		"GPUCOST_REPORT_SMTP_HOST=127.0.0.1",
		"GPUCOST_REPORT_SMTP_PORT="+smtpPort,
		"GPUCOST_REPORT_SMTP_RETRIES=0",
	)
	waitHTTP(t, "http://"+addr+"/livez", serve)
	job := promtest.UniqueJob(t)
	promtest.Register(t, prom, addr, map[string]string{"job": job})
	api := promtest.API(t, prom)

	// Every job's series from the first scrape on, with its own label, at 0 before any run.
	perJob := waitQuery(t, api, fmt.Sprintf(`count by (job_name) (gpucost_job_runs_total{job=%q})`, job), 30*time.Second, serve,
		func(v model.Vector) bool { return len(v) == 3 })
	for _, s := range perJob {
		if s.Value != 4 {
			t.Errorf("Prometheus sees %v outcomes of job %s, want 4 (ok, partial, failed, panicked)", s.Value, s.Metric["job_name"])
		}
	}
	build := waitQuery(t, api, fmt.Sprintf(`gpucost_build_info{job=%q}`, job), 10*time.Second, serve, func(v model.Vector) bool { return len(v) == 1 })
	if b := build[0]; b.Value != 1 || b.Metric["version"] != "dev" || !strings.HasPrefix(string(b.Metric["goversion"]), "go") || b.Metric["revision"] == "" {
		t.Errorf("gpucost_build_info as Prometheus sees it: %v", b)
	}
	waitQuery(t, api, fmt.Sprintf(`process_start_time_seconds{job=%q}`, job), 10*time.Second, serve, func(v model.Vector) bool { return len(v) == 1 })

	// The report fails (the mail server refuses every team); the plan runs.
	failed := fmt.Sprintf(`gpucost_job_runs_total{job=%q, job_name="report", outcome="failed"}`, job)
	waitQuery(t, api, failed, 90*time.Second, serve, func(v model.Vector) bool { return len(v) == 1 && v[0].Value >= 1 })
	planned := waitQuery(t, api, fmt.Sprintf(`sum by (outcome) (gpucost_job_runs_total{job=%q, job_name="optimize"}) > 0`, job), 60*time.Second, serve,
		func(v model.Vector) bool { return len(v) > 0 })
	if len(planned) != 1 || planned[0].Metric["outcome"] != "ok" {
		t.Fatalf("the nightly plan's runs by outcome: %v, want only ok\n%s", planned, serve.logs())
	}
	if first := query(t, api, "min_over_time("+failed+"[10m])"); len(first) != 1 || first[0].Value != 0 {
		t.Errorf("Prometheus never saw the failed-report counter at 0 before the failure (min %v): an alert on its increase would miss the first one", first)
	}

	data, err := os.ReadFile(filepath.Join("prometheus", "alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rf ruleFile
	if err := yaml.UnmarshalStrict(data, &rf); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"GpucostReportFailed": true}
	for _, g := range rf.Groups {
		if g.Name != "gpucost" {
			continue
		}
		for _, r := range g.Rules {
			if !strings.Contains(r.Expr, "gpucost_job_") {
				continue
			}
			expr := strings.ReplaceAll(r.Expr, `job="gpucost"`, fmt.Sprintf("job=%q", job))
			got := query(t, api, expr)
			t.Logf("%s: %v", r.Alert, got)
			if fires := len(got) > 0; fires != want[r.Alert] {
				t.Errorf("%s on serve's metrics as Prometheus sees them: %v, want firing %v", r.Alert, got, want[r.Alert])
			}
			for _, s := range got {
				if s.Metric["job"] != model.LabelValue(job) {
					t.Errorf("%s: %v has no job label of the scrape: the alert could not be routed", r.Alert, s.Metric)
				}
			}
		}
	}
}

// oneTeam is a workloads file of one team with one workload.
const oneTeam = `teams:
  - name: search
    email: search-ml@example.com
    workloads:
      - name: chat-7b
        kind: inference
        params_b: 7
        precision: fp16
        context_tokens: 4096
        concurrency: 8
        hours_per_month: 730
`

// serveProcess is a gpucost serve child process.
type serveProcess struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	output bytes.Buffer
}

func (p *serveProcess) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.output.Write(b)
}

// logs is what the process has written so far.
func (p *serveProcess) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.output.String()
}

// startServe starts `gpucost serve` with env (on a clean environment) and stops it with SIGTERM
// when the test ends.
func startServe(t *testing.T, bin string, env ...string) *serveProcess {
	t.Helper()
	p := &serveProcess{cmd: exec.Command(bin, "serve")}
	p.cmd.Dir, p.cmd.Env, p.cmd.Stdout, p.cmd.Stderr = tmpRoot, cleanEnv(env...), p, p
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("gpucost serve after SIGTERM: %v\n%s", err, p.logs())
			}
		case <-time.After(30 * time.Second):
			_ = p.cmd.Process.Kill()
			t.Errorf("gpucost serve did not stop within 30 s of SIGTERM\n%s", p.logs())
		}
	})
	return p
}

// freeAddr returns a loopback address nothing listens on (a port free a moment ago).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitHTTP waits until url answers 200.
func waitHTTP(t *testing.T, url string, p *serveProcess) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
	t.Fatalf("%s did not answer 200 within 20 s\n%s", url, p.logs())
}

// query evaluates expr now on the Prometheus of api.
func query(t *testing.T, api v1.API, expr string) model.Vector {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, _, _, err := api.Query(ctx, expr, time.Now())
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	vec, ok := v.(model.Vector)
	if !ok {
		t.Fatalf("%s: a %s, want a vector", expr, v.Type())
	}
	return vec
}

// waitQuery evaluates expr until ok says its result is what the test waits for.
func waitQuery(t *testing.T, api v1.API, expr string, within time.Duration, p *serveProcess, ok func(model.Vector) bool) model.Vector {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		v := query(t, api, expr)
		if ok(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus: %s is %v after %s\nserve's logs:\n%s", expr, v, within, p.logs())
		}
		time.Sleep(500 * time.Millisecond)
	}
}
