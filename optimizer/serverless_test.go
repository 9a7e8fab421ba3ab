package optimizer_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/costmodel"
	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/scrapers"
)

// TestServerlessSwitchesAtTheBreakEven: the guides' A100 at $1.39/h on demand against a
// serverless A100 at 1.48 times that ($2.0572/h). An always-on endpoint busy below the
// break-even (1.39 / 2.0572 = 67.6%, no cold starts) is cheaper serverless, above it on an
// instance; the plan's note gives the break-even and the costs follow costmodel.
func TestServerlessSwitchesAtTheBreakEven(t *testing.T) {
	offs := offers(
		offerSpec{provider: "p", id: "a100", model: "A100-SXM-80GB", gpus: 1, pt: schema.OnDemand, perGPU: "1.39", intra: schema.IntraNVSwitch},
		offerSpec{provider: "s", id: "a100-serverless", model: "A100-SXM-80GB", gpus: 1, pt: schema.Serverless, perGPU: "2.0572", intra: schema.IntraNVSwitch},
	)
	opts := optimizer.DefaultOptions()
	opts.ServerlessWakesPerDay = 0 // the guides count no cold starts
	breakEven, err := costmodel.Serverless{Rate: decimal.RequireFromString("2.0572")}.BreakEven(decimal.RequireFromString("1.39"), costmodel.Usage{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(breakEven-0.6757) > 0.0001 {
		t.Fatalf("break-even %.4f", breakEven)
	}
	for _, tt := range []struct {
		utilization float64
		want        schema.PriceType
	}{
		{0.2, schema.Serverless}, {0.5, schema.Serverless}, {breakEven - 0.01, schema.Serverless},
		{breakEven + 0.01, schema.OnDemand}, {0.8, schema.OnDemand}, {1, schema.OnDemand},
	} {
		t.Run(fmt.Sprintf("%.3f", tt.utilization), func(t *testing.T) {
			wp := planOne(t, fmt.Sprintf(`- name: chat
  kind: inference
  params_b: 8
  precision: fp16
  context_tokens: 4096
  concurrency: 4
  gpus_allowed: [A100-SXM-80GB]
  utilization: %g
`, tt.utilization), offs, opts)
			r := wp.Recommended
			if r == nil || r.PriceType != tt.want {
				t.Fatalf("recommended %s, want %s", placementID(r), tt.want)
			}
			rate := "1.39"
			u := costmodel.Usage{Utilization: 1}
			if tt.want == schema.Serverless {
				rate, u = "2.0572", costmodel.Usage{Utilization: tt.utilization}
			}
			want, _ := costmodel.Serverless{Rate: decimal.RequireFromString(rate)}.Monthly(u)
			if want = want.Round(2); !r.CostUSDPerMonth.Sub(want).Abs().LessThanOrEqual(decimal.RequireFromString("0.03")) {
				t.Errorf("cost $%s a month, costmodel says $%s", r.CostUSDPerMonth, want)
			}
			if !strings.Contains(strings.Join(r.Notes, "; "), "cheaper below 68% utilization") &&
				!strings.Contains(strings.Join(r.Notes, "; "), "cheaper above 68% utilization") {
				t.Errorf("no break-even in the notes %q", r.Notes)
			}
			// Serverless comes with advice saying why; an instance, like a workload with no
			// current placement paid by the hour, needs none.
			var advice []string
			for _, a := range wp.Advice {
				if a.Kind == optimizer.AdvicePricing {
					advice = append(advice, a.Text)
				}
			}
			switch {
			case tt.want == schema.OnDemand && len(advice) > 0:
				t.Errorf("advice on an instance: %q", advice)
			case tt.want == schema.Serverless && (len(advice) != 1 || !strings.Contains(advice[0], "Pay for busy time only") ||
				!strings.Contains(advice[0], "against $1,014.70 for the cheapest instance, billed all 730 h it is up") ||
				!strings.Contains(advice[0], fmt.Sprintf("cheaper below 68%% utilization; this workload: %.0f%% busy", tt.utilization*100))):
				t.Errorf("advice %q", advice)
			}
		})
	}
}

// TestServerlessBillsColdStarts: with the default options a serverless deployment wakes 24
// times a day and pays 30 s for each: 730 wakes, 6.08 h a month on top of the busy hours.
func TestServerlessBillsColdStarts(t *testing.T) {
	offs := offers(offerSpec{provider: "s", id: "h100", model: "H100-SXM-80GB", gpus: 1, pt: schema.Serverless, perGPU: "3.58", intra: schema.IntraNVSwitch})
	wp := planOne(t, `- name: chat
  kind: inference
  params_b: 8
  precision: fp16
  context_tokens: 4096
  concurrency: 4
  utilization: 20%
`, offs, optimizer.DefaultOptions())
	r := wp.Recommended
	if r == nil {
		t.Fatalf("nothing fits: %s", wp.Reason)
	}
	busy := 0.2*730 + 730*30/3600.0
	if got, _ := r.HoursPerMonth.Float64(); math.Abs(got-busy) > 0.01 {
		t.Errorf("billed %v h, want %.2f (146 busy + 730 cold starts of 30 s)", got, busy)
	}
	// A million tokens costs what the billed hours cost over the tokens of the busy ones.
	if r.UnitCost == nil || !strings.Contains(r.UnitCost.Unit, "tokens") {
		t.Fatalf("unit cost %+v", r.UnitCost)
	}
	perHour := r.DecodeTokensPerSecond * 4 * 3600
	want := 3.58 * busy / (0.2 * 730) * 1e6 / perHour
	if got, _ := r.UnitCost.USD.Float64(); math.Abs(got-want)/want > 0.002 {
		t.Errorf("$%v per 1M tokens, want about $%.4f", got, want)
	}
}

// TestServerlessTakesNoJob: a training job is busy all its hours; a serverless offer is
// rejected with the reason.
func TestServerlessTakesNoJob(t *testing.T) {
	offs := offers(offerSpec{provider: "s", id: "h100", model: "H100-SXM-80GB", gpus: 8, pt: schema.Serverless, perGPU: "3.58", intra: schema.IntraNVSwitch})
	wp := planOne(t, `- name: tune
  kind: lora
  params_b: 8
  train_tokens: 1e8
`, offs, optimizer.DefaultOptions())
	if wp.Recommended != nil {
		t.Fatalf("a job placed on %s", placementID(wp.Recommended))
	}
	if len(wp.Rejected) == 0 || !strings.Contains(wp.Rejected[0].Reason, "only serverless offers, which take a service") {
		t.Errorf("rejected %+v", wp.Rejected)
	}
	_, err := optimizer.ParseWorkloads("w.yaml", []byte("teams:\n  - name: t\n    email: t@example.com\n    workloads:\n      - name: w\n        kind: lora\n        params_b: 8\n        train_tokens: 1e8\n        utilization: 0.5\n"))
	if err == nil || !strings.Contains(err.Error(), "utilization: does not apply to kind lora") {
		t.Errorf("utilization on a job: %v", err)
	}
	for _, bad := range []string{"1.2", "0", "-10%", "half"} {
		_, err := optimizer.ParseWorkloads("w.yaml", []byte("teams:\n  - name: t\n    email: t@example.com\n    workloads:\n      - name: w\n        kind: custom\n        min_vram_gb_per_gpu: 10\n        utilization: "+bad+"\n"))
		if err == nil || !strings.Contains(err.Error(), "w.yaml:8") {
			t.Errorf("utilization %s: %v", bad, err)
		}
	}
}

// TestTodayOnServerless: a team already on the serverless A100 at 20% pays for its busy
// hours (146 × 2.0572 = $300.35), and the plan finds nothing to save by moving to the same offer.
func TestTodayOnServerless(t *testing.T) {
	offs := offers(
		offerSpec{provider: "p", id: "a100", model: "A100-SXM-80GB", gpus: 1, pt: schema.OnDemand, perGPU: "1.39", intra: schema.IntraNVSwitch},
		offerSpec{provider: "s", id: "a100-serverless", model: "A100-SXM-80GB", gpus: 1, pt: schema.Serverless, perGPU: "2.0572", intra: schema.IntraNVSwitch},
	)
	opts := optimizer.DefaultOptions()
	opts.ServerlessWakesPerDay = 0
	wp := planOne(t, `- name: chat
  kind: inference
  params_b: 8
  precision: fp16
  context_tokens: 4096
  concurrency: 4
  utilization: 0.2
  current: {provider: s, gpu_model: A100-SXM-80GB, gpu_count: 1, price_type: serverless}
`, offs, opts)
	if wp.Current == nil || wp.Current.CostUSDPerMonth.String() != "300.35" {
		t.Fatalf("today: %+v", wp.Current)
	}
	if got := placementID(wp.Recommended); got != "s/a100-serverless ×1 serverless" || wp.Savings == nil || !wp.Savings.USDPerMonth.IsZero() {
		t.Errorf("recommended %s, savings %+v", got, wp.Savings)
	}
}

// TestRunPodServerlessAgainstItsPods plans on the offers the scrapers read from RunPod's recorded
// answers: the gpuTypes answer's pods and the v2 catalog's serverless prices, as a run with a
// key stores them. The H100 SXM costs 3.29 an hour on a secure pod (an always-on endpoint's
// hosts) and 4.176 an hour serverless. With the default 24 wakes a day of 30 s, serverless is
// cheaper below 3.29/4.176 − 6.08 h of cold starts/730 h = 78.8% − 0.8% = 78% utilization:
//   - busy 20%: serverless bills 146 busy hours and 6.08 of cold starts, 152.08 × 4.176 =
//     $635.09 a month, against 730 × 3.29 = $2,401.70 for the pod;
//   - busy 90%: serverless would bill 657 + 6.08 = 663.08 h, $2,769.02, so the pod wins at
//     $2,401.70.
func TestRunPodServerlessAgainstItsPods(t *testing.T) {
	run := schema.Run{ID: "run-test", ObservedAt: fixtureNow.Add(-time.Hour)}
	var offs []schema.Offer
	for _, a := range []struct {
		file  string
		parse func([]byte, schema.Run, string) ([]schema.Offer, []error, error)
	}{
		{"runpod_gputypes.json", scrapers.ParseRunPod},
		{"runpod_catalog.json", scrapers.ParseRunPodCatalog},
	} {
		body, err := os.ReadFile(filepath.Join("..", "scrapers", "testdata", a.file))
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := a.parse(body, run, "https://api.runpod.io/")
		if err != nil {
			t.Fatal(err)
		}
		offs = append(offs, got...)
	}
	for _, tt := range []struct {
		utilization string
		want        string
		perGPU      string
		hours       string
		cost        string
	}{
		{"20%", "runpod/NVIDIA H100 80GB HBM3:serverless ×1 serverless", "4.176", "152.08", "635.09"},
		{"90%", "runpod/NVIDIA H100 80GB HBM3:secure ×1 on_demand", "3.29", "730", "2401.7"},
	} {
		t.Run(tt.utilization, func(t *testing.T) {
			wp := planOne(t, `- name: chat
  kind: inference
  params_b: 8
  precision: fp16
  context_tokens: 8192
  concurrency: 4
  gpus_allowed: [H100-SXM-80GB]
  utilization: `+tt.utilization+"\n", offs, optimizer.DefaultOptions())
			r := wp.Recommended
			if got := placementID(r); got != tt.want {
				t.Fatalf("recommended %s, want %s", got, tt.want)
			}
			if r.PriceUSDPerGPUHour.String() != tt.perGPU || r.HoursPerMonth.String() != tt.hours || r.CostUSDPerMonth.String() != tt.cost {
				t.Errorf("$%s/GPU-h × %s h = $%s a month, want $%s × %s h = $%s", r.PriceUSDPerGPUHour, r.HoursPerMonth, r.CostUSDPerMonth, tt.perGPU, tt.hours, tt.cost)
			}
			if notes := strings.Join(r.Notes, "; "); !strings.Contains(notes, "serverless is cheaper below 78% utilization") {
				t.Errorf("no break-even in the notes %q", notes)
			}
		})
	}
}
