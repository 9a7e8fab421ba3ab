// Package gpuusage reads how busy a workload's GPUs were from Prometheus, through its HTTP API
// (client_golang's api client). What it reads by default is the DCGM exporter's
// DCGM_FI_DEV_GPU_UTIL: for each GPU, the share of the time a kernel ran on it, as a percentage
// (0–100), which Prometheus averages over a window.
//
// A Reader asks one instant query per measurement, at the window's end, built from a template:
// $selector becomes the workload's label matchers (namespace="search",pod=~"chat-7b-.*", written
// without braces) and $window the window as a PromQL duration (1w, 30s). The query must yield
// one series per GPU, each a busy share between 0 and 1 (DefaultQuery divides the percentage by
// 100); the Reader averages them and counts them into a schema.GPUUsage. Its errors say what
// failed (Prometheus unreachable or slow, the request refused, the query refused with
// Prometheus's message, no series matched, a value that is not a share) and name the selector;
// the bearer token it may send is never in them.
package gpuusage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/go-cleanhttp"
	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/gpucost/gpucost/schema"
)

// DefaultQuery is the average busy share of each GPU the selector picks out over the window:
// DCGM_FI_DEV_GPU_UTIL is a percentage.
const DefaultQuery = `avg_over_time(DCGM_FI_DEV_GPU_UTIL{$selector}[$window]) / 100`

// Config is where a Reader asks and what.
type Config struct {
	// URL is the Prometheus server, e.g. http://prometheus:9090, with no credentials in it.
	URL string
	// Query is the PromQL template, with $selector and $window; empty means DefaultQuery.
	Query string
	// Window is the stretch a measurement averages, ending at the time asked for; it is
	// written into the query as a PromQL duration, to the millisecond.
	Window time.Duration
	// Timeout bounds one measurement.
	Timeout time.Duration
	// BearerToken, when not empty, is sent as "Authorization: Bearer …" with every request. It
	// is a secret: no error holds it.
	BearerToken string
}

// Reader measures GPU utilization on one Prometheus server. It is safe for concurrent use.
type Reader struct {
	api     v1.API
	server  string // the URL, for errors
	query   string
	window  time.Duration
	timeout time.Duration
	token   bool // a bearer token is sent
}

// New returns a Reader of c, or an error saying which setting is unusable.
func New(c Config) (*Reader, error) {
	u, err := url.Parse(c.URL)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return nil, errors.New("gpuusage: the Prometheus URL is not an http(s):// URL")
	case u.User != nil:
		return nil, errors.New("gpuusage: the Prometheus URL holds credentials: send a bearer token instead")
	case c.Window <= 0 || c.Window%time.Millisecond != 0:
		return nil, fmt.Errorf("gpuusage: window %s: want a positive whole number of milliseconds", c.Window)
	case c.Timeout <= 0:
		return nil, fmt.Errorf("gpuusage: timeout %s: want a positive duration", c.Timeout)
	}
	if c.Query == "" {
		c.Query = DefaultQuery
	}
	if err := CheckQuery(c.Query); err != nil {
		return nil, fmt.Errorf("gpuusage: %w", err)
	}
	var rt http.RoundTripper = cleanhttp.DefaultPooledTransport()
	if c.BearerToken != "" {
		rt = bearer{token: c.BearerToken, next: rt}
	}
	client, err := api.NewClient(api.Config{Address: c.URL, RoundTripper: rt})
	if err != nil {
		return nil, fmt.Errorf("gpuusage: %w", err)
	}
	return &Reader{api: v1.NewAPI(client), server: u.String(), query: c.Query, window: c.Window, timeout: c.Timeout, token: c.BearerToken != ""}, nil
}

// variable is a $name of a query template.
var variable = regexp.MustCompile(`\$[A-Za-z_][A-Za-z0-9_]*`)

// CheckQuery checks a query template: it must hold $selector and $window, and no other
// variable (PromQL has none; Grafana's $__rate_interval is not filled in here).
func CheckQuery(q string) error {
	for _, v := range variable.FindAllString(q, -1) {
		if v != "$selector" && v != "$window" {
			return fmt.Errorf("query %q: unknown variable %s (want $selector and $window)", q, v)
		}
	}
	for _, v := range []string{"$selector", "$window"} {
		if !strings.Contains(q, v) {
			return fmt.Errorf("query %q has no %s: it must pick the workload's GPUs with $selector (inside the braces of a series selector) and average over $window", q, v)
		}
	}
	return nil
}

// Measure returns the average utilization of the GPUs selector picks out (label matchers
// without braces) over the Reader's window ending at end.
func (r *Reader) Measure(ctx context.Context, selector string, end time.Time) (schema.GPUUsage, error) {
	end = end.UTC()
	from := end.Add(-r.window)
	window := model.Duration(r.window).String()
	query := strings.NewReplacer("$selector", selector, "$window", window).Replace(r.query)
	fail := func(format string, args ...any) error {
		return fmt.Errorf("reading the GPU utilization of {%s} from Prometheus at %s: %s", selector, r.server, fmt.Sprintf(format, args...))
	}
	qctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	value, _, _, err := r.api.Query(qctx, query, end)
	if err != nil {
		return schema.GPUUsage{}, r.explain(ctx, qctx, query, err, fail)
	}
	vec, ok := value.(model.Vector)
	if !ok {
		return schema.GPUUsage{}, fail("the query yields a %s, not one series per GPU (query %s)", value.Type(), query)
	}
	if len(vec) == 0 {
		return schema.GPUUsage{}, fail("no GPU series matched over the %s to %s (query %s)", window, end.Format(time.RFC3339), query)
	}
	sort.Sort(vec) // by labels: the same series is named when several are not shares
	var sum float64
	for _, s := range vec {
		v := float64(s.Value)
		if math.IsNaN(v) || v < 0 || v > 1 {
			return schema.GPUUsage{}, fail("series %s is %g, not a busy share between 0 and 1: the query must yield one share per GPU (DCGM_FI_DEV_GPU_UTIL is a percentage: divide it by 100)", s.Metric, v)
		}
		sum += v
	}
	return schema.GPUUsage{Share: math.Round(sum/float64(len(vec))*1e4) / 1e4, GPUs: len(vec), From: from, To: end}, nil
}

// explain words a failed query: Prometheus unreachable or too slow, the request refused, or the
// query refused with Prometheus's own message. ctx is the caller's context, qctx the query's.
func (r *Reader) explain(ctx, qctx context.Context, query string, err error, fail func(string, ...any) error) error {
	if ctx.Err() != nil {
		return fail("%v", ctx.Err()) // the caller gave up: not Prometheus's doing
	}
	if errors.Is(qctx.Err(), context.DeadlineExceeded) {
		return fail("no answer within %s", r.timeout)
	}
	var apiErr *v1.Error
	if !errors.As(err, &apiErr) {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, which the message names already
		}
		return fail("unreachable: %v", err)
	}
	// The client gives an HTTP error without a Prometheus answer (a proxy's 401, say) no type of
	// its own: its message is "client error: CODE", written by client_golang's
	// errorTypeAndMsgFor, and read here.
	for _, code := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		if apiErr.Msg == fmt.Sprintf("client error: %d", code) {
			if r.token {
				return fail("the request was refused (HTTP %d): the bearer token is wrong or lacks access", code)
			}
			return fail("the request was refused (HTTP %d): it wants a bearer token", code)
		}
	}
	return fail("the query failed: %s: %s (query %s)", apiErr.Type, apiErr.Msg, query)
}

// bearer sends a bearer token with every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

// RoundTrip implements http.RoundTripper on a copy of the request, as a RoundTripper must.
func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(req)
}
