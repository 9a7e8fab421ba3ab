package optimizer_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/schema"
)

// measuredEnd is the end of the week the tests' measurements cover.
var measuredEnd = time.Date(2026, 12, 4, 2, 30, 0, 0, time.UTC)

// week is a measurement of share over n GPUs in the week to measuredEnd.
func week(share float64, n int) *schema.GPUUsage {
	return &schema.GPUUsage{Share: share, GPUs: n, From: measuredEnd.Add(-7 * 24 * time.Hour), To: measuredEnd}
}

// h100Market: an H100 on demand at $3.25/h, serverless at $3.58/h (Verda's 1.10×), and on a
// three-month term at $2.50/h.
func h100Market() []schema.Offer {
	return offers(
		offerSpec{provider: "p", id: "h100", model: "H100-SXM-80GB", gpus: 1, pt: schema.OnDemand, perGPU: "3.25", intra: schema.IntraNVSwitch},
		offerSpec{provider: "s", id: "h100-serverless", model: "H100-SXM-80GB", gpus: 1, pt: schema.Serverless, perGPU: "3.58", intra: schema.IntraNVSwitch},
		offerSpec{provider: "r", id: "h100-3m", model: "H100-SXM-80GB", gpus: 1, pt: schema.Term3M, perGPU: "2.50", intra: schema.IntraNVSwitch},
	)
}

// chatOn8 is a chat service that sits on 8 H100s today, its GPUs picked out by a selector.
const chatOn8 = `- name: chat
  kind: inference
  params_b: 8
  precision: fp16
  context_tokens: 4096
  concurrency: 4
  current: {provider: p, gpu_model: H100-SXM-80GB, gpu_count: 8, metrics_selector: 'namespace="search",pod=~"chat-.*"'}
`

// tuneOn1 is a LoRA job that runs on one H100 today, its GPU picked out by a selector.
const tuneOn1 = `- name: tune
  kind: lora
  params_b: 8
  train_tokens: 1e8
  current: {provider: p, gpu_model: H100-SXM-80GB, metrics_selector: 'job="tune"'}
`

// planMeasured plans one workload (YAML of a workload item) with a measurement of today's GPUs.
func planMeasured(t *testing.T, workloadYAML string, m *schema.GPUUsage, unmeasured string) optimizer.WorkloadPlan {
	t.Helper()
	doc := "teams:\n  - name: t\n    email: t@example.com\n    workloads:\n" + indent(workloadYAML, "      ")
	f := MustParse(t, "test.yaml", doc)
	f.Teams[0].Workloads[0].Measured = m
	f.Teams[0].Workloads[0].Unmeasured = unmeasured
	p := MustOptimize(t, optimizer.Input{Workloads: f, Offers: h100Market()}, optimizer.DefaultOptions())
	return p.Teams[0].Workloads[0]
}

// utilizationAdvice is the one utilization advice of wp, or fails the test.
func utilizationAdvice(t *testing.T, wp optimizer.WorkloadPlan) string {
	t.Helper()
	var texts []string
	for _, a := range wp.Advice {
		if a.Kind == optimizer.AdviceUtilization {
			texts = append(texts, a.Text)
		}
	}
	if len(texts) != 1 {
		t.Fatalf("utilization advice %q, want one", texts)
	}
	return texts[0]
}

// TestMeasuredUtilizationAdvice: the advice says what was measured in the team's words and
// what the guides advise at that level, with the plan's own figures.
func TestMeasuredUtilizationAdvice(t *testing.T) {
	for _, tt := range []struct {
		name     string
		workload string
		share    float64
		want     string
		// pricing is the pricing advice that follows when the plan recommends paying
		// another way (serverless, a term): the figures the utilization advice leaves to it.
		pricing string
	}{
		{"12%: pay for busy time only", chatOn8, 0.12,
			"Your 8 H100-SXM-80GB averaged 12% busy over the week to 2026-12-04 (8 GPUs measured). " +
				"Below 30% busy, pay for busy time only: serverless, or instances stopped when idle (one idle at 0% for over 15 minutes should be shut down).",
			// Serverless bills 0.12 × 730 = 87.6 busy hours and 730 wakes of 30 s (6.08 h):
			// 93.68 h × $3.58 = $335.37. The break-even is 3.25 / 3.58 − 6.08 / 730 = 89.9%.
			"Pay for busy time only: serverless (s H100-SXM-80GB ×1 at $3.58/h) bills 93.68 h a month, the busy hours and cold starts: $335.37, " +
				"against $2,372.50 for the cheapest instance, billed all 730 h it is up (p H100-SXM-80GB ×1 at $3.25/h); serverless is cheaper below 90% utilization; this workload: 12% busy (measured)."},
		{"idle: shut it down", chatOn8, 0, "Your 8 H100-SXM-80GB averaged 0% busy over the week to 2026-12-04 (8 GPUs measured). " +
			"They did no work: shut them down, as any instance idle (0%) for over 15 minutes should be; if the service must answer now and then, pay for its busy time only (serverless).",
			// 730 wakes of 30 s: 6.08 h × $3.58 = $21.77.
			"Pay for busy time only: serverless (s H100-SXM-80GB ×1 at $3.58/h) bills 6.08 h a month, the busy hours and cold starts: $21.77, " +
				"against $2,372.50 for the cheapest instance, billed all 730 h it is up (p H100-SXM-80GB ×1 at $3.25/h); serverless is cheaper below 90% utilization; this workload: 0% busy (measured)."},
		{"45% with no commitment allowed", chatOn8, 0.45, "Your 8 H100-SXM-80GB averaged 45% busy over the week to 2026-12-04 (8 GPUs measured). " +
			"Between 30% and 60% busy, mix: reserved or term capacity for the steady base, spot or on-demand for the rest. " +
			"Set commit_up_to (1m, 3m, 1y …) to have the plan weigh term prices.",
			// 0.45 × 730 + 6.08 = 334.58 h × $3.58 = $1,197.80.
			"Pay for busy time only: serverless (s H100-SXM-80GB ×1 at $3.58/h) bills 334.58 h a month, the busy hours and cold starts: $1,197.80, " +
				"against $2,372.50 for the cheapest instance, billed all 730 h it is up (p H100-SXM-80GB ×1 at $3.25/h); serverless is cheaper below 90% utilization; this workload: 45% busy (measured)."},
		{"45% with a three-month term allowed", chatOn8 + "  commit_up_to: 3m\n", 0.45, "Your 8 H100-SXM-80GB averaged 45% busy over the week to 2026-12-04 (8 GPUs measured). " +
			"Between 30% and 60% busy, mix: reserved or term capacity for the steady base, spot or on-demand for the rest. " +
			// $2.50 × 730 h.
			"The plan's cheapest commitment: r H100-SXM-80GB ×1 term_3m at $1,825.00 a month.",
			// Serverless still wins at 45%: against the term the break-even is 2.50 / 3.58 −
			// 6.08 / 730 = 69%.
			"Pay for busy time only: serverless (s H100-SXM-80GB ×1 at $3.58/h) bills 334.58 h a month, the busy hours and cold starts: $1,197.80, " +
				"against $1,825.00 for the cheapest instance, billed all 730 h it is up (r H100-SXM-80GB ×1 at $2.50/h); serverless is cheaper below 69% utilization; this workload: 45% busy (measured)."},
		{"75%", chatOn8 + "  commit_up_to: 3m\n", 0.75, "Your 8 H100-SXM-80GB averaged 75% busy over the week to 2026-12-04 (8 GPUs measured). " +
			"Above 60% busy, reserved capacity pays, or owning the GPUs.",
			"Commit for 3 months: r H100-SXM-80GB ×1 at $2.50/h bills every hour of it, busy or not: $1,825.00 a month, $5,475.00 for the term, against $2,372.50 at the cheapest hourly price (p H100-SXM-80GB ×1 at $3.25/h, on_demand)."},
		{"a job at 10%", tuneOn1, 0.1, "Your H100-SXM-80GB averaged 10% busy over the week to 2026-12-04 (1 GPU measured). " +
			"Below 30% busy, pay for busy time only: stop the instances between runs (one idle at 0% for over 15 minutes should be shut down).", ""},
		{"an idle job", tuneOn1, 0.004, "Your H100-SXM-80GB averaged 0% busy over the week to 2026-12-04 (1 GPU measured). " +
			"It did no work: shut it down between runs, as any instance idle (0%) for over 15 minutes should be.", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := 8
			if strings.Contains(tt.workload, "kind: lora") {
				n = 1
			}
			wp := planMeasured(t, tt.workload, week(tt.share, n), "")
			if got := utilizationAdvice(t, wp); got != tt.want {
				t.Errorf("advice\n got %s\nwant %s", got, tt.want)
			}
			var pricing string
			for _, a := range wp.Advice {
				if a.Kind == optimizer.AdvicePricing {
					pricing = a.Text
				}
			}
			if pricing != tt.pricing {
				t.Errorf("pricing advice\n got %s\nwant %s", pricing, tt.pricing)
			}
			if wp.MeasuredUtilization == nil || wp.MeasuredUtilization.Share != tt.share || wp.MeasuredUtilization.GPUs != n {
				t.Errorf("measured_utilization %+v", wp.MeasuredUtilization)
			}
			if len(wp.Caveats) != 0 {
				t.Errorf("caveats %q, want none", wp.Caveats)
			}
		})
	}
}

// TestMeasuredShareCostsAService: a service with no utilization of its own is planned at the
// measured share, as if the file said it; the file's own utilization wins, with a caveat when
// the two are far apart. A service measured idle breaks nothing: serverless wins, and no unit
// cost is made up for tokens it did not make.
func TestMeasuredShareCostsAService(t *testing.T) {
	measured := planMeasured(t, chatOn8, week(0.12, 8), "")
	stated := planMeasured(t, chatOn8+"  utilization: 0.12\n", nil, "")
	if placementID(measured.Recommended) != "s/h100-serverless ×1 serverless" ||
		!measured.Recommended.CostUSDPerMonth.Equal(stated.Recommended.CostUSDPerMonth) ||
		!measured.Current.CostUSDPerMonth.Equal(stated.Current.CostUSDPerMonth) {
		t.Errorf("measured 12%%: %s at $%s (today $%s); stated 12%%: %s at $%s (today $%s)",
			placementID(measured.Recommended), measured.Recommended.CostUSDPerMonth, measured.Current.CostUSDPerMonth,
			placementID(stated.Recommended), stated.Recommended.CostUSDPerMonth, stated.Current.CostUSDPerMonth)
	}
	if notes := strings.Join(measured.Recommended.Notes, "; "); !strings.Contains(notes, "this workload: 12% busy (measured)") {
		t.Errorf("notes %q", notes)
	}

	// The file says 80%, Prometheus 12%: the file wins.
	both := planMeasured(t, chatOn8+"  utilization: 0.8\n", week(0.12, 8), "")
	file := planMeasured(t, chatOn8+"  utilization: 0.8\n", nil, "")
	if !both.Recommended.CostUSDPerMonth.Equal(file.Recommended.CostUSDPerMonth) || both.Recommended.CostUSDPerMonth.Equal(measured.Recommended.CostUSDPerMonth) {
		t.Errorf("file 80%%, measured 12%%: $%s a month; file 80%% alone: $%s, measured 12%% alone: $%s", both.Recommended.CostUSDPerMonth,
			file.Recommended.CostUSDPerMonth, measured.Recommended.CostUSDPerMonth)
	}
	want := "the file's utilization (80%) is far from the 12% measured over the week to 2026-12-04: the plan uses the file's; remove utilization to plan with the measured one"
	if len(both.Caveats) != 1 || both.Caveats[0] != want {
		t.Errorf("caveats %q\nwant %q", both.Caveats, want)
	}
	if close := planMeasured(t, chatOn8+"  utilization: 0.25\n", week(0.12, 8), ""); len(close.Caveats) != 0 {
		t.Errorf("file 25%%, measured 12%%: caveats %q, want none", close.Caveats)
	}

	idle := planMeasured(t, chatOn8, week(0, 8), "")
	if r := idle.Recommended; r == nil || r.PriceType != schema.Serverless || r.UnitCost != nil {
		t.Fatalf("idle: recommended %s with unit cost %+v, want serverless and none", placementID(r), r.UnitCost)
	}
	if idle.Current.UnitCost != nil || idle.Savings == nil || !idle.Savings.USDPerMonth.IsPositive() {
		t.Errorf("idle: today's unit cost %+v, savings %+v", idle.Current.UnitCost, idle.Savings)
	}
}

// TestMeasuredJobIsNotRecosted: a job is busy all the hours it runs, whatever its GPUs did in
// the week between runs: the measurement changes no cost, only adds the advice.
func TestMeasuredJobIsNotRecosted(t *testing.T) {
	measured := planMeasured(t, tuneOn1, week(0.1, 1), "")
	plain := planMeasured(t, tuneOn1, nil, "")
	if placementID(measured.Recommended) != placementID(plain.Recommended) || !measured.Recommended.CostUSDPerMonth.Equal(plain.Recommended.CostUSDPerMonth) ||
		!measured.Current.CostUSDPerMonth.Equal(plain.Current.CostUSDPerMonth) {
		t.Errorf("measured: %s at $%s; not measured: %s at $%s", placementID(measured.Recommended), measured.Recommended.CostUSDPerMonth,
			placementID(plain.Recommended), plain.Recommended.CostUSDPerMonth)
	}
	if len(plain.Advice) != 0 || plain.MeasuredUtilization != nil {
		t.Errorf("not measured: advice %+v, measurement %+v", plain.Advice, plain.MeasuredUtilization)
	}
}

// TestMeasurementCaveats: a selector that matched another number of GPUs than today's, and a
// measurement that failed, are said.
func TestMeasurementCaveats(t *testing.T) {
	wp := planMeasured(t, chatOn8, week(0.12, 6), "")
	want := `the metrics_selector {namespace="search",pod=~"chat-.*"} matched 6 GPUs, but today's placement has 8: check that it picks exactly today's GPUs`
	if len(wp.Caveats) != 1 || wp.Caveats[0] != want {
		t.Errorf("caveats %q\nwant %q", wp.Caveats, want)
	}

	why := `reading the GPU utilization of {namespace="search",pod=~"chat-.*"} from Prometheus at http://prometheus:9090: unreachable: connection refused`
	for _, tt := range []struct{ workload, want string }{
		{chatOn8, "utilization not measured: " + why + "; the plan counts the service busy whenever it is up"},
		{chatOn8 + "  utilization: 20%\n", "utilization not measured: " + why + "; the plan uses the file's utilization (20%)"},
	} {
		wp := planMeasured(t, tt.workload, nil, why)
		measuredAdvice := slices.ContainsFunc(wp.Advice, func(a optimizer.Advice) bool { return a.Kind == optimizer.AdviceUtilization })
		if len(wp.Caveats) != 1 || wp.Caveats[0] != tt.want || measuredAdvice || wp.MeasuredUtilization != nil {
			t.Errorf("caveats %q, advice %+v, measurement %+v\nwant the caveat %q alone, and no utilization advice", wp.Caveats, wp.Advice, wp.MeasuredUtilization, tt.want)
		}
	}
}

// TestMeasurementSpans: a window other than a week is named as a person would.
func TestMeasurementSpans(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{30 * time.Second, "over the 30 seconds to 2026-12-04 02:30 UTC"},
		{6 * time.Hour, "over the 6 hours to 2026-12-04 02:30 UTC"},
		{24 * time.Hour, "over the day to 2026-12-04"},
		{3 * 24 * time.Hour, "over the 3 days to 2026-12-04"},
		{14 * 24 * time.Hour, "over the 2 weeks to 2026-12-04"},
		{90 * time.Minute, "over the 90 minutes to 2026-12-04 02:30 UTC"},
	} {
		m := &schema.GPUUsage{Share: 0.5, GPUs: 8, From: measuredEnd.Add(-tt.d), To: measuredEnd}
		if got := utilizationAdvice(t, planMeasured(t, chatOn8, m, "")); !strings.Contains(got, "averaged 50% busy "+tt.want+" (8 GPUs measured)") {
			t.Errorf("%s: %s", tt.d, got)
		}
	}
}

// TestOptimizeRefusesAMeasurementThatIsNoShare: a File built in code with a measured share
// outside 0–1 is refused, as a bad file would be.
func TestOptimizeRefusesAMeasurementThatIsNoShare(t *testing.T) {
	f := MustParse(t, "test.yaml", "teams:\n  - name: t\n    email: t@example.com\n    workloads:\n"+indent(chatOn8, "      "))
	f.Teams[0].Workloads[0].Measured = week(12, 8)
	_, err := optimizer.Optimize(optimizer.Input{Now: fixtureNow, Workloads: f, Offers: h100Market()}, optimizer.DefaultOptions())
	if err == nil || !strings.Contains(err.Error(), "measured utilization 12 of 8 GPUs: want a share between 0 and 1") {
		t.Errorf("error %v", err)
	}
}

// TestMetricsSelectorParsed: a current placement's metrics_selector is Prometheus label
// matchers without braces; anything else names the file, line and field.
func TestMetricsSelectorParsed(t *testing.T) {
	doc := func(sel string) string {
		return "teams:\n  - name: t\n    email: t@example.com\n    workloads:\n      - name: w\n        kind: custom\n        min_vram_gb_per_gpu: 10\n" +
			"        current:\n          provider: p\n          gpu_model: H100-SXM-80GB\n          metrics_selector: " + sel + "\n"
	}
	for _, sel := range []string{
		`'namespace="search",pod=~"chat-7b-.*"'`,
		`'job!="x", gpu!~"1|2",'`,
		`"Hostname='node-1'"`,
		"'modelName=`NVIDIA H100 80GB HBM3`'",
	} {
		f, err := optimizer.ParseWorkloads("w.yaml", []byte(doc(sel)))
		if err != nil {
			t.Errorf("%s: %v", sel, err)
			continue
		}
		if got := f.Teams[0].Workloads[0].Current.MetricsSelector; got == "" || strings.HasPrefix(got, " ") {
			t.Errorf("%s: read as %q", sel, got)
		}
	}
	for _, tt := range []struct{ sel, want string }{
		{`'{namespace="search"}'`, "write the label matchers without the braces"},
		{`''`, "empty: want Prometheus label matchers"},
		{`'namespace=search'`, "is not Prometheus label matchers"},
		{`'namespace="search"} or vector(1) #'`, "is not Prometheus label matchers"},
		{`'up'`, "is not Prometheus label matchers"},
	} {
		_, err := optimizer.ParseWorkloads("w.yaml", []byte(doc(tt.sel)))
		if err == nil || !strings.Contains(err.Error(), "w.yaml:11") || !strings.Contains(err.Error(), "metrics_selector") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want w.yaml:11, the field and %q", tt.sel, err, tt.want)
		}
	}
}
