package gpuusage_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gpucost/gpucost/gpuusage"
	"github.com/gpucost/gpucost/gpuusage/gpuusagetest"
)

// searchGPUs are the 8 H100s of a node serving namespace search (busy 4–20%, 12% on average),
// and two GPUs of another team on the same node, which no selector of search's picks.
func searchGPUs() []gpuusagetest.GPU {
	var gpus []gpuusagetest.GPU
	for i, util := range []float64{4, 8, 12, 16, 10, 14, 20, 12} {
		gpus = append(gpus, gpuusagetest.GPU{Index: i, Util: util,
			Labels: map[string]string{"namespace": "search", "pod": "chat-7b-" + string(rune('0'+i/4)), "container": "vllm"}})
	}
	for i := 8; i < 10; i++ {
		gpus = append(gpus, gpuusagetest.GPU{Index: i, Util: 95, Labels: map[string]string{"namespace": "research", "pod": "ft-13b-0"}})
	}
	return gpus
}

// newReader reads the exporter's Prometheus over a 30 s window (the exporter is seconds old).
func newReader(t *testing.T, c gpuusage.Config) *gpuusage.Reader {
	t.Helper()
	if c.Window == 0 {
		c.Window = 30 * time.Second
	}
	if c.Timeout == 0 {
		c.Timeout = 10 * time.Second
	}
	r, err := gpuusage.New(c)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestMeasureAveragesEveryGPU: 8 H100s at 4–20% average 12% busy, 8 GPUs measured; the other
// team's GPUs on the node are not counted.
func TestMeasureAveragesEveryGPU(t *testing.T) {
	ex := gpuusagetest.Serve(t, searchGPUs()...)
	r := newReader(t, gpuusage.Config{URL: ex.Prometheus})
	end := time.Now()
	got, err := r.Measure(context.Background(), `job="`+ex.Job+`",namespace="search",pod=~"chat-7b-.*"`, end)
	if err != nil {
		t.Fatal(err)
	}
	if got.Share != 0.12 || got.GPUs != 8 {
		t.Errorf("measured %.4f over %d GPUs, want 0.12 over 8", got.Share, got.GPUs)
	}
	if !got.To.Equal(end.UTC()) || got.To.Sub(got.From) != 30*time.Second || got.To.Location() != time.UTC {
		t.Errorf("window %s to %s, want the 30 s to %s in UTC", got.From, got.To, end.UTC())
	}
	// The research GPU alone: one series at 95%.
	got, err = r.Measure(context.Background(), `job="`+ex.Job+`",namespace="research"`, end)
	if err != nil || got.Share != 0.95 || got.GPUs != 2 {
		t.Errorf("research: %+v, %v; want 0.95 over 2 GPUs", got, err)
	}
}

// TestMeasureFailures: each way a measurement fails says what failed and names the selector.
func TestMeasureFailures(t *testing.T) {
	ex := gpuusagetest.Serve(t, searchGPUs()...)
	selector := `job="` + ex.Job + `",namespace="search"`
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + closed.Addr().String()
	closed.Close()
	// A server that never answers, until the test ends.
	release := make(chan struct{})
	stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer stall.Close()
	defer close(release)

	for _, tt := range []struct {
		name     string
		c        gpuusage.Config
		selector string
		want     string
	}{
		{"no series match", gpuusage.Config{URL: ex.Prometheus}, `job="` + ex.Job + `",namespace="serach"`, "no GPU series matched over the 30s to "},
		{"the query is not PromQL", gpuusage.Config{URL: ex.Prometheus, Query: `avg_over_time(DCGM_FI_DEV_GPU_UTIL{$selector}[$window] / 100`}, selector, "the query failed: bad_data: "},
		{"the percentage not divided", gpuusage.Config{URL: ex.Prometheus, Query: `avg_over_time(DCGM_FI_DEV_GPU_UTIL{$selector}[$window])`}, selector, "is 4, not a busy share between 0 and 1"},
		{"one number, not a series per GPU", gpuusage.Config{URL: ex.Prometheus, Query: `scalar(avg(avg_over_time(DCGM_FI_DEV_GPU_UTIL{$selector}[$window]))) / 100`}, selector, "the query yields a scalar, not one series per GPU"},
		{"Prometheus down", gpuusage.Config{URL: closedURL}, selector, "unreachable: dial tcp " + closed.Addr().String()},
		{"Prometheus too slow", gpuusage.Config{URL: stall.URL, Timeout: 300 * time.Millisecond}, selector, "no answer within 300ms"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newReader(t, tt.c).Measure(context.Background(), tt.selector, time.Now())
			t.Log(err)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "{"+tt.selector+"}") {
				t.Errorf("error %v\nwant it to say %q and name {%s}", err, tt.want, tt.selector)
			}
		})
	}
}

// TestMeasureSendsTheBearerToken: behind a proxy that wants a bearer token (as Prometheus
// behind an authenticating proxy does), the right token measures and a wrong one is refused,
// with an error that does not repeat it.
func TestMeasureSendsTheBearerToken(t *testing.T) {
	ex := gpuusagetest.Serve(t, searchGPUs()...)
	target, err := url.Parse(ex.Prometheus)
	if err != nil {
		t.Fatal(err)
	}
	const token = "prom-token-7f3a9c"
	proxy := httputil.NewSingleHostReverseProxy(target)
	guard := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized: "+r.Header.Get("Authorization"), http.StatusUnauthorized)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer guard.Close()
	selector := `job="` + ex.Job + `",namespace="search"`

	got, err := newReader(t, gpuusage.Config{URL: guard.URL, BearerToken: token}).Measure(context.Background(), selector, time.Now())
	if err != nil || got.Share != 0.12 || got.GPUs != 8 {
		t.Errorf("with the token: %+v, %v; want 0.12 over 8 GPUs", got, err)
	}
	for _, tt := range []struct{ token, want string }{
		{"wrong-token-1234", "the request was refused (HTTP 401): the bearer token is wrong or lacks access"},
		{"", "the request was refused (HTTP 401): it wants a bearer token"},
	} {
		_, err := newReader(t, gpuusage.Config{URL: guard.URL, BearerToken: tt.token}).Measure(context.Background(), selector, time.Now())
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("token %q: error %v, want %q", tt.token, err, tt.want)
		}
		if tt.token != "" && err != nil && strings.Contains(err.Error(), tt.token) {
			t.Errorf("the error shows the token: %v", err)
		}
	}
}

// TestNewRefusesUnusableSettings: a Reader is not built on settings it cannot work with.
func TestNewRefusesUnusableSettings(t *testing.T) {
	ok := gpuusage.Config{URL: "http://prometheus:9090", Window: time.Hour, Timeout: time.Second}
	if _, err := gpuusage.New(ok); err != nil {
		t.Fatalf("good settings: %v", err)
	}
	for _, tt := range []struct {
		name string
		edit func(*gpuusage.Config)
		want string
	}{
		{"not a URL", func(c *gpuusage.Config) { c.URL = "prometheus:9090" }, "not an http(s):// URL"},
		{"a password in the URL", func(c *gpuusage.Config) { c.URL = "http://u:hunter22@prometheus:9090" }, "holds credentials"},
		{"no window", func(c *gpuusage.Config) { c.Window = 0 }, "window 0s"},
		{"no timeout", func(c *gpuusage.Config) { c.Timeout = -time.Second }, "timeout -1s"},
		{"no selector", func(c *gpuusage.Config) { c.Query = "avg_over_time(DCGM_FI_DEV_GPU_UTIL[$window])" }, "has no $selector"},
		{"no window in the query", func(c *gpuusage.Config) { c.Query = "DCGM_FI_DEV_GPU_UTIL{$selector} / 100" }, "has no $window"},
		{"a Grafana variable", func(c *gpuusage.Config) {
			c.Query = "avg_over_time(DCGM_FI_DEV_GPU_UTIL{$selector}[$__rate_interval]) / 100 + 0*vector($window)"
		}, "unknown variable $__rate_interval"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.edit(&c)
			_, err := gpuusage.New(c)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "hunter22") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}
