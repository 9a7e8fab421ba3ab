package optimizer_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/scrapers"
)

// TestRunPodTermPrices plans on the offers ParseRunPod reads from the recorded gpuTypes answer,
// whose H100 SXM has savings plans of a week to six months (secure 3.29 on-demand; 3.19, 2.99,
// 2.79, 2.59 per GPU-hour). An always-on endpoint runs on secure hosts only, so the plans
// compete with 3.29; a workload takes the cheapest term it allows, and none without
// commit_up_to.
func TestRunPodTermPrices(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("..", "scrapers", "testdata", "runpod_gputypes.json"))
	if err != nil {
		t.Fatal(err)
	}
	run := schema.Run{ID: "run-test", ObservedAt: fixtureNow.Add(-time.Hour)}
	offs, _, err := scrapers.ParseRunPod(body, run, scrapers.DefaultRunPodURL)
	if err != nil {
		t.Fatal(err)
	}
	const serving = `- name: chat
  kind: inference
  params_b: 8
  precision: fp16
  context_tokens: 8192
  concurrency: 4
  gpus_allowed: [H100-SXM-80GB]
`
	for _, tt := range []struct {
		name, extra string
		want        string
		perGPU      string
	}{
		{"no commitment", "", "runpod/NVIDIA H100 80GB HBM3:secure ×1 on_demand", "3.29"},
		{"up to three months", "  commit_up_to: 3m\n", "runpod/NVIDIA H100 80GB HBM3:secure ×1 term_3m", "2.79"},
		{"up to a month", "  commit_up_to: 1m\n", "runpod/NVIDIA H100 80GB HBM3:secure ×1 term_1m", "2.99"},
		{"a week", "  commit_up_to: 1w\n", "runpod/NVIDIA H100 80GB HBM3:secure ×1 term_1w", "3.19"},
		{"a year takes the six months", "  commit_up_to: 1y\n", "runpod/NVIDIA H100 80GB HBM3:secure ×1 term_6m", "2.59"},
		// Up 100 hours a month, a term would bill 730: 730 × 2.79 = $2,036.70 against 100 × 3.29.
		{"a part-time endpoint pays by the hour", "  commit_up_to: 3m\n  hours_per_month: 100\n", "runpod/NVIDIA H100 80GB HBM3:secure ×1 on_demand", "3.29"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wp := planOne(t, serving+tt.extra, offs, optimizer.DefaultOptions())
			if got := placementID(wp.Recommended); got != tt.want {
				t.Fatalf("recommended %s, want %s", got, tt.want)
			}
			r := wp.Recommended
			if r.PriceUSDPerGPUHour.String() != tt.perGPU {
				t.Errorf("per GPU-hour %s, want %s", r.PriceUSDPerGPUHour, tt.perGPU)
			}
			hours := "730"
			if strings.Contains(tt.extra, "hours_per_month") {
				hours = "100"
			}
			if r.HoursPerMonth.String() != hours {
				t.Errorf("billed %s hours a month, want %s", r.HoursPerMonth, hours)
			}
			if want := r.PriceUSDPerHour.Mul(r.HoursPerMonth).Round(2); !r.CostUSDPerMonth.Equal(want) {
				t.Errorf("cost %s a month, want %s", r.CostUSDPerMonth, want)
			}
			// A term comes with advice weighing it against the hourly price: 730 × 3.29 =
			// $2,401.70 a month on demand.
			var advice string
			for _, a := range wp.Advice {
				if a.Kind == optimizer.AdvicePricing {
					advice += a.Text
				}
			}
			if r.PriceType == schema.OnDemand {
				if advice != "" {
					t.Errorf("advice on an hourly placement: %q", advice)
				}
				return
			}
			months, _ := r.PriceType.TermMonths()
			term := r.CostUSDPerMonth.Mul(decimal.NewFromFloat(months)).StringFixed(2)
			if !strings.HasPrefix(advice, "Commit for ") || !strings.Contains(advice, "against $2,401.70 at the cheapest hourly price") ||
				!strings.Contains(strings.ReplaceAll(advice, ",", ""), "$"+term+" for the term") {
				t.Errorf("advice %q, want the term's total $%s against $2,401.70 on demand", advice, term)
			}
		})
	}
}

// TestCommitmentRules: a term bills every hour of it, even for a job that runs a few hours;
// a term longer than commit_up_to, or a reserved price of no stated term, is rejected with the
// reason, unless the options allow every commitment.
func TestCommitmentRules(t *testing.T) {
	offs := offers(
		offerSpec{provider: "p", id: "od", model: "H100-SXM-80GB", gpus: 8, pt: schema.OnDemand, perGPU: "3.00", intra: schema.IntraNVSwitch},
		offerSpec{provider: "p", id: "6m", model: "H100-SXM-80GB", gpus: 8, pt: schema.Term6M, perGPU: "2.00", intra: schema.IntraNVSwitch},
		offerSpec{provider: "q", id: "res", model: "A100-SXM-80GB", gpus: 8, pt: schema.Reserved, perGPU: "1.00", intra: schema.IntraNVSwitch},
	)
	const job = `- name: tune
  kind: full_finetune
  params_b: 8
  train_tokens: 2e9
  gpus_allowed: [H100-SXM-80GB, A100-SXM-80GB]
`
	wp := planOne(t, job+"  commit_up_to: 3m\n", offs, optimizer.DefaultOptions())
	if got := placementID(wp.Recommended); got != "p/od ×8 on_demand" {
		t.Errorf("with commit_up_to 3m: recommended %s, want the on-demand offer", got)
	}
	reasons := map[string]string{}
	for _, r := range wp.Rejected {
		reasons[r.GPUModel] = r.Reason
	}
	if r := reasons["A100-SXM-80GB"]; !strings.Contains(r, "only reserved offers, of a term not stated") {
		t.Errorf("A100 rejected for %q", r)
	}

	// A year allows the six months: a job of a few hours a run still pays all 730 of the month,
	// and each of its two runs half of that.
	wp = planOne(t, job+"  commit_up_to: 1y\n  runs_per_month: 2\n", offs, optimizer.DefaultOptions())
	var term *optimizer.Placement
	for _, p := range append([]optimizer.Placement{*wp.Recommended}, wp.Alternatives...) {
		if p.PriceType == schema.Term6M {
			term = &p
		}
	}
	if term == nil {
		t.Fatalf("no term_6m placement among %s and %d alternatives", placementID(wp.Recommended), len(wp.Alternatives))
	}
	if term.HoursPerMonth.String() != "730" {
		t.Errorf("a term billed %s hours a month, want 730", term.HoursPerMonth)
	}
	if want := term.CostUSDPerMonth.Div(decimal.NewFromInt(2)).Round(2); term.CostUSDPerRun == nil || !term.CostUSDPerRun.Equal(want) {
		t.Errorf("a run on the term costs %v, want half the month's %s", term.CostUSDPerRun, term.CostUSDPerMonth)
	}
	if notes := strings.Join(term.Notes, "; "); !strings.Contains(notes, "term_6m: a commitment of 6 months, billed every hour of it") {
		t.Errorf("no commitment note in %q", notes)
	}

	opts := optimizer.DefaultOptions()
	opts.AllowCommitments = true
	wp = planOne(t, job, offs, opts)
	found := false
	for _, p := range append([]optimizer.Placement{*wp.Recommended}, wp.Alternatives...) {
		found = found || p.PriceType == schema.Reserved
	}
	if !found {
		t.Error("allow_commitments does not admit the reserved offer")
	}
}

// TestTodayIsBilledAsTheCandidates: a team running its endpoint 100 hours a month on RunPod's
// three-month plan pays for the plan's 730 hours (730 × 2.79 = $2,036.70), and moving to
// on-demand for its 100 hours (100 × 3.29 = $329) is the saving.
func TestTodayIsBilledAsTheCandidates(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("..", "scrapers", "testdata", "runpod_gputypes.json"))
	if err != nil {
		t.Fatal(err)
	}
	offs, _, err := scrapers.ParseRunPod(body, schema.Run{ID: "run-test", ObservedAt: fixtureNow.Add(-time.Hour)}, scrapers.DefaultRunPodURL)
	if err != nil {
		t.Fatal(err)
	}
	wp := planOne(t, `- name: chat
  kind: inference
  params_b: 8
  precision: fp16
  context_tokens: 8192
  concurrency: 4
  hours_per_month: 100
  commit_up_to: 3m
  gpus_allowed: [H100-SXM-80GB]
  current: {provider: runpod, gpu_model: H100-SXM-80GB, gpu_count: 1, price_type: term_3m}
`, offs, optimizer.DefaultOptions())
	if wp.Current == nil || wp.Current.CostUSDPerMonth.String() != "2036.7" || wp.Current.HoursPerMonth.String() != "730" {
		t.Fatalf("today: %+v", wp.Current)
	}
	if got := placementID(wp.Recommended); got != "runpod/NVIDIA H100 80GB HBM3:secure ×1 on_demand" || wp.Recommended.CostUSDPerMonth.String() != "329" {
		t.Fatalf("recommended %s at $%s", got, wp.Recommended.CostUSDPerMonth)
	}
	if wp.Savings == nil || wp.Savings.USDPerMonth.String() != "1707.7" {
		t.Errorf("savings %+v, want $1,707.70", wp.Savings)
	}
}

func TestCommitUpToRejected(t *testing.T) {
	for _, bad := range []string{"3 months", "-1m", "forever", "11y"} {
		doc := "teams:\n  - name: t\n    email: t@example.com\n    workloads:\n      - name: w\n        kind: custom\n        min_vram_gb_per_gpu: 10\n        commit_up_to: " + bad + "\n"
		_, err := optimizer.ParseWorkloads("w.yaml", []byte(doc))
		if err == nil || !strings.Contains(err.Error(), "commit_up_to") || !strings.Contains(err.Error(), "w.yaml:8") {
			t.Errorf("commit_up_to %q: error %v", bad, err)
		}
	}
}
