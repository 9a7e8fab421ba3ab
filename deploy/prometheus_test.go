package deploy_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/yaml"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/service"
	"github.com/gpucost/gpucost/tooltest"
)

// deploy/prometheus: alerting rules on gpucost serve's metrics, and their promtool unit tests.

// ruleFile is a Prometheus rule file (the fields these rules use; others are errors).
type ruleFile struct {
	Groups []struct {
		Name     string `json:"name"`
		Interval string `json:"interval,omitempty"`
		Rules    []struct {
			Alert       string            `json:"alert"`
			Expr        string            `json:"expr"`
			For         string            `json:"for,omitempty"`
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"rules"`
	} `json:"groups"`
}

// ruleTests is the part of a promtool test file that says which alerts are tested.
type ruleTests struct {
	Tests []struct {
		AlertRuleTest []struct {
			Alertname string `json:"alertname"`
			ExpAlerts []any  `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

// descRecorder is a prometheus.Registerer that keeps the names of what is registered.
type descRecorder struct{ names []string }

var reFQName = regexp.MustCompile(`fqName: "([^"]+)"`)

func (r *descRecorder) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc, 16)
	go func() { c.Describe(ch); close(ch) }()
	for d := range ch {
		if m := reFQName.FindStringSubmatch(d.String()); m != nil {
			r.names = append(r.names, m[1])
		}
	}
	return nil
}

func (r *descRecorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = r.Register(c)
	}
}

func (r *descRecorder) Unregister(prometheus.Collector) bool { return false }

// gpucostMetrics are the series names gpucost's /metrics can have (histograms with their
// _bucket, _sum and _count): the scrape's per provider and serve's own.
func gpucostMetrics() map[string]bool {
	rec := &descRecorder{}
	pipeline.NewMetrics(rec)
	service.NewMetrics(rec, "test")
	names := map[string]bool{}
	for _, n := range rec.names {
		names[n] = true
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			names[n+suffix] = true
		}
	}
	return names
}

var reMetricName = regexp.MustCompile(`\bgpucost_[a-z0-9_]+`)

// TestPrometheusAlerts decodes the rules strictly and checks every rule: a metric gpucost
// really exports, a severity, a summary and description, and a promtool unit test that fires it.
func TestPrometheusAlerts(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("prometheus", "alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rf ruleFile
	if err := yaml.UnmarshalStrict(data, &rf); err != nil {
		t.Fatalf("prometheus/alerts.yaml: %v", err)
	}
	fired := map[string]bool{}
	for _, file := range ruleTestFiles(t) {
		testData, err := os.ReadFile(filepath.Join("prometheus", file))
		if err != nil {
			t.Fatal(err)
		}
		var rt ruleTests
		if err := yaml.Unmarshal(testData, &rt); err != nil {
			t.Fatalf("prometheus/%s: %v", file, err)
		}
		for _, tc := range rt.Tests {
			for _, a := range tc.AlertRuleTest {
				if len(a.ExpAlerts) > 0 {
					fired[a.Alertname] = true
				}
			}
		}
	}

	known := gpucostMetrics()
	if len(known) == 0 {
		t.Fatal("pipeline.NewMetrics and service.NewMetrics registered nothing")
	}
	n := 0
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			n++
			what := "alert " + r.Alert
			if !strings.HasPrefix(r.Alert, "Gpucost") {
				t.Errorf("%s: name alerts Gpucost... so they group and route together", what)
			}
			if strings.TrimSpace(r.Expr) == "" {
				t.Errorf("%s: no expr", what)
			}
			for _, m := range reMetricName.FindAllString(r.Expr, -1) {
				if !known[m] {
					t.Errorf("%s: %s is not a metric gpucost exports (it has %v)", what, m, sortedKeys(known))
				}
			}
			if r.For != "" {
				if _, err := time.ParseDuration(r.For); err != nil {
					t.Errorf("%s: for %q: %v", what, r.For, err)
				}
			}
			if !slices.Contains([]string{"critical", "warning", "info"}, r.Labels["severity"]) {
				t.Errorf("%s: severity %q, want critical, warning or info", what, r.Labels["severity"])
			}
			if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("%s: needs a summary and a description", what)
			}
			if !fired[r.Alert] {
				t.Errorf("%s: no test in prometheus/*_test.yaml makes it fire", what)
			}
		}
	}
	if n == 0 {
		t.Fatal("prometheus/alerts.yaml has no rules")
	}
}

// TestPrometheusAlertsPromtool runs `promtool check rules` and the rules' unit tests.
func TestPrometheusAlertsPromtool(t *testing.T) {
	promtool := tooltest.Find(t, "prometheus", "promtool")
	dir, _ := filepath.Abs("prometheus")
	if r := runIn(t, dir, cleanEnv(), promtool, "check", "rules", "alerts.yaml"); r.code != 0 {
		t.Errorf("promtool check rules: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runIn(t, dir, cleanEnv(), promtool, append([]string{"test", "rules"}, ruleTestFiles(t)...)...); r.code != 0 {
		t.Errorf("promtool test rules: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// ruleTestFiles are the promtool unit test files of the rules: prometheus/*_test.yaml.
func ruleTestFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("prometheus", "*_test.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no prometheus/*_test.yaml: %v", err)
	}
	for i, f := range files {
		files[i] = filepath.Base(f)
	}
	return files
}
