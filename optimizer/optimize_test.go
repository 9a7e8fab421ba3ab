package optimizer_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/schema"
)

const (
	onDemand = schema.OnDemand
	spot     = schema.Spot
	nvswitch = schema.IntraNVSwitch
	ib       = schema.InterInfiniBand
)

// TestCheapestPerJob covers the cases where the lowest hourly price is not the cheapest way to
// finish the work.
func TestCheapestPerJob(t *testing.T) {
	tests := []struct {
		name     string
		workload string
		offers   []schema.Offer
		want     string // placementID of the recommendation
		cheapest string // the lowest hourly price among feasible offers, which must lose
	}{
		{
			name: "LoRA: an H100 at 6× the hourly price finishes the job cheaper than an RTX 4090",
			workload: `- name: lora
  kind: lora
  params_b: 7
  train_tokens: 1e9
`,
			offers: offers(
				offerSpec{provider: "vastai", id: "4090", model: "RTX-4090-24GB", gpus: 1, perGPU: "0.34"},
				offerSpec{provider: "runpod", id: "h100", model: "H100-SXM-80GB", gpus: 1, perGPU: "1.99"},
			),
			want: "runpod/h100 ×1 on_demand", cheapest: "vastai/4090 ×1 on_demand",
		},
		{
			name: "inference batch job: bandwidth makes the RTX 4090 cheaper than the L4",
			workload: `- name: batch
  kind: inference
  params_b: 7
  precision: fp16
  context_tokens: 2048
  concurrency: 4
  hours_per_month: 100
  reference_gpu: A10-24GB
`,
			offers: offers(
				offerSpec{provider: "runpod", id: "l4", model: "L4-24GB", gpus: 1, perGPU: "0.43"},
				offerSpec{provider: "runpod", id: "4090", model: "RTX-4090-24GB", gpus: 1, perGPU: "0.50"},
			),
			want: "runpod/4090 ×1 on_demand", cheapest: "runpod/l4 ×1 on_demand",
		},
		{
			name: "spot 5% cheaper loses to on-demand on a job: restarts cost 10% more hours",
			workload: `- name: ft
  kind: lora
  params_b: 7
  train_tokens: 1e9
  interruptible: true
`,
			offers: offers(
				offerSpec{provider: "runpod", id: "h100", model: "H100-SXM-80GB", gpus: 1, perGPU: "2.00"},
				offerSpec{provider: "runpod", id: "h100", model: "H100-SXM-80GB", gpus: 1, pt: spot, perGPU: "1.90"},
			),
			want: "runpod/h100 ×1 on_demand", cheapest: "runpod/h100 ×1 spot",
		},
		{
			name: "deadline: the A100 node is cheaper per run but too slow for 12 hours",
			workload: `- name: ft
  kind: full_finetune
  params_b: 13
  train_tokens: 1e9
  deadline: 12h
`,
			offers: offers(
				offerSpec{provider: "lambda", id: "a100x8", model: "A100-SXM-80GB", gpus: 8, perGPU: "0.40", intra: nvswitch},
				offerSpec{provider: "lambda", id: "h100x8", model: "H100-SXM-80GB", gpus: 8, perGPU: "1.99", intra: nvswitch},
			),
			want: "lambda/h100x8 ×8 on_demand", cheapest: "lambda/a100x8 ×8 on_demand",
		},
	}
	opts := optimizer.DefaultOptions()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wp := planOne(t, tt.workload, tt.offers, opts)
			if got := placementID(wp.Recommended); got != tt.want {
				t.Fatalf("recommended %s, want %s (rejected %v)", got, tt.want, wp.Rejected)
			}
			// The offer with the lowest hourly price is feasible on its own, and dearer per month.
			var alone []schema.Offer
			for _, o := range tt.offers {
				if strings.HasPrefix(tt.cheapest, o.Provider+"/"+o.OfferID+" ") && strings.HasSuffix(tt.cheapest, string(o.PriceType)) {
					alone = append(alone, o)
				}
			}
			other := planOne(t, strings.Replace(tt.workload, "deadline: 12h", "deadline: 48h", 1), alone, opts)
			if other.Recommended == nil {
				t.Fatalf("%s alone is not feasible: %v", tt.cheapest, other.Rejected)
			}
			if !other.Recommended.PriceUSDPerHour.GreaterThan(decimal.Zero) ||
				!other.Recommended.PriceUSDPerGPUHour.LessThan(wp.Recommended.PriceUSDPerGPUHour) {
				t.Errorf("%s is not cheaper per GPU-hour (%s vs %s)", tt.cheapest, other.Recommended.PriceUSDPerGPUHour, wp.Recommended.PriceUSDPerGPUHour)
			}
			if tt.name[:8] != "deadline" && !other.Recommended.CostUSDPerMonth.GreaterThan(wp.Recommended.CostUSDPerMonth) {
				t.Errorf("%s costs %s a month, not more than the recommendation's %s", tt.cheapest, other.Recommended.CostUSDPerMonth, wp.Recommended.CostUSDPerMonth)
			}
		})
	}
}

// TestJobArithmetic checks one job plan by hand: the numbers a reader would recompute.
func TestJobArithmetic(t *testing.T) {
	wp := planOne(t, `- name: lora
  kind: lora
  params_b: 7
  train_tokens: 1e9
  runs_per_month: 4
`, offers(offerSpec{provider: "runpod", id: "h100", model: "H100-SXM-80GB", gpus: 1, perGPU: "1.99"}), optimizer.DefaultOptions())
	r := wp.Recommended
	// 4 × 7e9 × 1e9 FLOPs / (989e12 × 0.40) / 3600 = 19.66 h per run.
	hours := 4 * 7e9 * 1e9 / (989e12 * 0.40) / 3600
	wantRun := decimal.NewFromFloat(math.Round(hours*100) / 100)
	if !r.HoursPerRun.Equal(wantRun) {
		t.Errorf("hours per run %s, want %s", r.HoursPerRun, wantRun)
	}
	if want := decimal.RequireFromString("1.99").Mul(wantRun).Round(2); !r.CostUSDPerRun.Equal(want) {
		t.Errorf("cost per run %s, want %s", r.CostUSDPerRun, want)
	}
	if want := decimal.RequireFromString("1.99").Mul(wantRun.Mul(decimal.NewFromInt(4))).Round(2); !r.CostUSDPerMonth.Equal(want) {
		t.Errorf("cost per month %s, want %s", r.CostUSDPerMonth, want)
	}
}

// TestPretrainMultiNode: 70B pretraining needs multi-node InfiniBand (docs/gpus.md §1.4): single
// hosts and clusters without RDMA are rejected even when cheaper per GPU-hour.
func TestPretrainMultiNode(t *testing.T) {
	offs := offers(
		offerSpec{provider: "lambda", id: "h100x8", model: "H100-SXM-80GB", gpus: 8, perGPU: "2.49", intra: nvswitch, inter: schema.InterEthernet},
		offerSpec{provider: "vastai", id: "h100x8", model: "H100-SXM-80GB", gpus: 8, perGPU: "2.20", intra: nvswitch},
		offerSpec{provider: "runpod", id: "mi300x8", model: "MI300X-192GB", gpus: 8, perGPU: "1.50", intra: schema.IntraInfinityFabric},
		offerSpec{provider: "coreweave", id: "h100x8", model: "H100-SXM-80GB", gpus: 8, perGPU: "2.79", intra: nvswitch, inter: ib},
	)
	wp := planOne(t, `- name: pt
  kind: pretrain
  params_b: 70
  train_tokens: 1.4e12
  deadline: 30d
`, offs, optimizer.DefaultOptions())
	r := wp.Recommended
	if r == nil || r.Provider != "coreweave" || r.Nodes < 2 || r.InterNode != ib {
		t.Fatalf("recommended %+v, want coreweave over several InfiniBand nodes; rejected %v", r, wp.Rejected)
	}
	// The fewest nodes that meet the deadline: 5.88e23 / (8k × 989e12 × 0.40 × 0.90 × 0.85).
	perNodeHour := 8 * 989e12 * 0.40 * 0.90 * 0.85 * 3600
	wantNodes := int(math.Ceil(5.88e23 / perNodeHour / (30 * 24)))
	if r.Nodes != wantNodes || r.GPUCount != 8*wantNodes {
		t.Errorf("nodes %d (GPUs %d), want %d", r.Nodes, r.GPUCount, wantNodes)
	}
	if hr := r.HoursPerRun.InexactFloat64(); hr > 30*24 {
		t.Errorf("run takes %v h, more than the deadline", hr)
	}
	var mi string
	for _, rj := range wp.Rejected {
		if rj.GPUModel == "MI300X-192GB" {
			mi = rj.Reason
		}
	}
	if !strings.Contains(mi, "more nodes need InfiniBand/RoCE") {
		t.Errorf("MI300X rejection %q, want it to say more nodes need InfiniBand/RoCE", mi)
	}
}

// TestPretrainGPUHours pins the compute model to docs/gpus.md §1.4: 70B on 1.4T tokens at 40% MFU
// is ≈ 413k H100-SXM GPU-hours (with perfect scaling).
func TestPretrainGPUHours(t *testing.T) {
	opts := optimizer.DefaultOptions()
	opts.Scaling = optimizer.ScalingEfficiency{NVSwitch: 1, NVLink: 1, PCIe: 1, HostMemory: 1, InterNode: 1}
	wp := planOne(t, `- name: pt
  kind: pretrain
  params_b: 70
  train_tokens: 1.4e12
  deadline: 17d
`, offers(offerSpec{provider: "coreweave", id: "h100x8", model: "H100-SXM-80GB", gpus: 8, perGPU: "2.79", intra: nvswitch, inter: ib}), opts)
	r := wp.Recommended
	if r == nil {
		t.Fatalf("no plan: %s", wp.Reason)
	}
	gpuHours := r.HoursPerRun.InexactFloat64() * float64(r.GPUCount)
	if math.Abs(gpuHours-413e3)/413e3 > 0.01 {
		t.Errorf("%v GPU-hours (%d GPUs × %s h), want ≈ 413k", gpuHours, r.GPUCount, r.HoursPerRun)
	}
}

// TestRejections checks the reason strings a reader sees, per GPU model.
func TestRejections(t *testing.T) {
	opts := optimizer.DefaultOptions()
	zero := uint32(0)
	tests := []struct {
		name     string
		workload string
		offers   []schema.Offer
		want     []string // reasons, in rejected order
	}{
		{
			name: "memory: an RTX 4090 is too small for 13B fp16 serving",
			workload: `- name: chat
  kind: inference
  params_b: 13
  precision: fp16
  context_tokens: 4096
  concurrency: 8
`,
			offers: offers(
				offerSpec{provider: "vastai", id: "1", model: "RTX-4090-24GB", gpus: 1, perGPU: "0.30"},
				offerSpec{provider: "runpod", id: "2", model: "A100-SXM-80GB", gpus: 1, perGPU: "1.39"},
			),
			want: []string{"RTX-4090-24GB ×1: 24 GB < 36 GB needed"},
		},
		{
			name: "interconnect: L40S pairs have no NVLink for sharded training",
			workload: `- name: ft
  kind: full_finetune
  params_b: 3
  train_tokens: 1e8
`,
			offers: offers(
				offerSpec{provider: "runpod", id: "l40s", model: "L40S-48GB", gpus: 2, perGPU: "0.79"},
				offerSpec{provider: "runpod", id: "h100", model: "H100-SXM-80GB", gpus: 1, perGPU: "1.99"},
			),
			want: []string{"L40S-48GB ×2: no NVLink, training needs it"},
		},
		{
			name: "spot only, workload not interruptible; unavailable; excluded region and provider",
			workload: `- name: chat
  kind: inference
  params_b: 7
  precision: fp16
  context_tokens: 2048
  concurrency: 2
  exclude_providers: [tensordock]
  exclude_regions: [europe]
`,
			offers: offers(
				offerSpec{provider: "vastai", id: "1", model: "RTX-4090-24GB", gpus: 1, pt: spot, perGPU: "0.20"},
				offerSpec{provider: "runpod", id: "2", model: "L4-24GB", gpus: 1, perGPU: "0.40", avail: &zero},
				offerSpec{provider: "lambda", id: "3", model: "A10-24GB", gpus: 1, perGPU: "0.75", region: "europe-central-1"},
				offerSpec{provider: "tensordock", id: "4", model: "RTX-3090-24GB", gpus: 1, perGPU: "0.10"},
				offerSpec{provider: "runpod", id: "5", model: "A100-SXM-80GB", gpus: 1, perGPU: "1.39"},
			),
			want: []string{
				"A10-24GB ×1: offered in europe-central-1, europe (lambda), where the workload does not run",
				"L4-24GB ×1: none available at runpod",
				"RTX-3090-24GB ×1: offered by tensordock, which the workload does not allow",
				"RTX-4090-24GB ×1: only spot offers, and the workload is not interruptible",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wp := planOne(t, tt.workload, tt.offers, opts)
			var got []string
			for _, r := range wp.Rejected {
				got = append(got, r.Reason)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("rejections (-want +got):\n%s", diff)
			}
		})
	}
}

// TestImpossibleWorkload: nothing fits, the plan says why and the run still succeeds.
func TestImpossibleWorkload(t *testing.T) {
	doc := `teams:
  - name: t
    email: t@example.com
    workloads:
      - name: huge
        kind: inference
        params_b: 1000
        precision: fp32
        kv_cache_gb: 100
      - name: small
        kind: inference
        params_b: 7
        precision: fp16
        kv_cache_gb: 2
`
	p := MustOptimize(t, optimizer.Input{Workloads: MustParse(t, "w.yaml", doc), Offers: offers(
		offerSpec{provider: "vastai", id: "1", model: "RTX-4090-24GB", gpus: 1, perGPU: "0.30"},
		offerSpec{provider: "coreweave", id: "2", model: "H100-SXM-80GB", gpus: 8, perGPU: "2.79", intra: nvswitch, inter: ib},
	)}, optimizer.DefaultOptions())
	huge := p.Teams[0].Workloads[0]
	if huge.Status != optimizer.StatusNoFit || huge.Recommended != nil {
		t.Fatalf("status %s, recommended %v; want no_fit", huge.Status, huge.Recommended)
	}
	for _, want := range []string{"needs 4100 GB across GPUs", "H100-SXM-80GB ×8", "inference does not span nodes"} {
		if !strings.Contains(huge.Reason, want) {
			t.Errorf("reason %q does not mention %q", huge.Reason, want)
		}
	}
	if len(huge.Rejected) != 2 {
		t.Errorf("rejected %v, want both GPU models", huge.Rejected)
	}
	if p.Teams[0].Workloads[1].Status != optimizer.StatusOK {
		t.Errorf("the small workload was not planned: %s", p.Teams[0].Workloads[1].Reason)
	}
	if p.Totals.NoFit != 1 || p.Totals.Workloads != 2 {
		t.Errorf("totals %+v, want 2 workloads, 1 without fit", p.Totals)
	}
}

// TestFreshness: one rule for scraped and imported prices. A price holds until its
// valid_until, else for max_offer_age_hours after it was observed; a provider none of whose
// prices holds is excluded with the reason, and a plan left with nothing says age is why.
func TestFreshness(t *testing.T) {
	doc := `teams:
  - name: t
    email: t@example.com
    workloads:
      - name: chat
        kind: inference
        params_b: 7
        precision: fp16
        kv_cache_gb: 2
        host_tiers: [any]
        current:
          provider: tensordock
          gpu_model: RTX-4090-24GB
`
	offs := offers(
		offerSpec{provider: "tensordock", id: "cheap", model: "RTX-4090-24GB", gpus: 1, perGPU: "0.10"},
		offerSpec{provider: "runpod", id: "ok", model: "RTX-4090-24GB", gpus: 1, perGPU: "0.34"},
	)
	stale := fixtureNow.Add(-30 * time.Hour)
	published := fixtureNow.AddDate(0, -2, 0) // an imported price table of two months ago
	nextYear, yesterday := fixtureNow.AddDate(1, 0, 0), fixtureNow.Add(-24*time.Hour)
	tests := []struct {
		name      string
		offers    func([]schema.Offer)
		maxAge    float64
		want      []optimizer.ExcludedProvider
		recommend string
		caveat    string // in the workload's caveats
	}{
		{
			name:      "a scraped price 30 h old no longer holds",
			offers:    func(o []schema.Offer) { o[0].ObservedAt = stale },
			want:      []optimizer.ExcludedProvider{{Provider: "tensordock", LastObserved: &stale, Reason: "newest price observed 30h ago, older than the 24h a price holds (max_offer_age_hours)"}},
			recommend: "runpod/ok ×1 on_demand",
			caveat:    "current placement priced from a tensordock price observed 30h ago, which no longer holds",
		},
		{
			name:      "max_offer_age_hours 48 keeps it",
			offers:    func(o []schema.Offer) { o[0].ObservedAt = stale },
			maxAge:    48,
			want:      []optimizer.ExcludedProvider{},
			recommend: "tensordock/cheap ×1 on_demand",
		},
		{
			name:      "an imported table valid until next year is today's market",
			offers:    func(o []schema.Offer) { o[0].ObservedAt, o[0].ValidUntil = published, &nextYear },
			want:      []optimizer.ExcludedProvider{},
			recommend: "tensordock/cheap ×1 on_demand",
		},
		{
			name:      "an imported table past its valid_until does not hold",
			offers:    func(o []schema.Offer) { o[0].ObservedAt, o[0].ValidUntil = published, &yesterday },
			want:      []optimizer.ExcludedProvider{{Provider: "tensordock", LastObserved: &published, Reason: "its prices held until 2025-11-28 13:00 UTC, 24h ago"}},
			recommend: "runpod/ok ×1 on_demand",
			caveat:    "current placement priced from a tensordock price that held until 2025-11-28 13:00 UTC (its valid_until)",
		},
		{
			name: "nothing holds: the plan says age is why",
			offers: func(o []schema.Offer) {
				for i := range o {
					o[i].ObservedAt = stale
				}
			},
			want: []optimizer.ExcludedProvider{
				{Provider: "runpod", LastObserved: &stale, Reason: "newest price observed 30h ago, older than the 24h a price holds (max_offer_age_hours)"},
				{Provider: "tensordock", LastObserved: &stale, Reason: "newest price observed 30h ago, older than the 24h a price holds (max_offer_age_hours)"},
			},
			recommend: "<none>",
			caveat:    "no offer's price holds now: 2 of the 2 offers on the market are older than the 24 h a price holds (optimize.options.max_offer_age_hours)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := append([]schema.Offer(nil), offs...)
			tt.offers(o)
			opts := optimizer.DefaultOptions()
			if tt.maxAge > 0 {
				opts.MaxOfferAgeHours = tt.maxAge
			}
			p := MustOptimize(t, optimizer.Input{Workloads: MustParse(t, "w.yaml", doc), Offers: o}, opts)
			if diff := cmp.Diff(tt.want, p.ExcludedProviders); diff != "" {
				t.Errorf("excluded (-want +got):\n%s", diff)
			}
			w := p.Teams[0].Workloads[0]
			if got := placementID(w.Recommended); got != tt.recommend {
				t.Errorf("recommended %s, want %s", got, tt.recommend)
			}
			if said := strings.Join(append(w.Caveats, w.Reason), "\n"); !strings.Contains(said, tt.caveat) {
				t.Errorf("caveats and reason %q, want %q", said, tt.caveat)
			}
		})
	}
}

// TestSavings: current placements priced at the market or the price paid; totals per team and
// overall count only workloads priced both ways.
func TestSavings(t *testing.T) {
	doc := `teams:
  - name: a
    email: a@example.com
    workloads:
      - name: market
        kind: custom
        min_vram_gb_per_gpu: 20
        current: {provider: lambda, gpu_model: A100-SXM-80GB, gpu_count: 1, price_type: on_demand}
      - name: paid
        kind: custom
        min_vram_gb_per_gpu: 20
        hours_per_month: 100
        current: {provider: lambda, gpu_model: A100-SXM-80GB, gpu_count: 2, paid_usd_per_gpu_hour: 1.50}
      - name: unpriced
        kind: custom
        min_vram_gb_per_gpu: 20
        current: {provider: nowhere, gpu_model: H100-SXM-80GB}
  - name: b
    email: b@example.com
    workloads:
      - name: paid-per-hour
        kind: custom
        min_vram_gb_per_gpu: 20
        current: {provider: lambda, gpu_model: A100-SXM-80GB, paid_usd_per_hour: "1.00"}
`
	p := MustOptimize(t, optimizer.Input{Workloads: MustParse(t, "w.yaml", doc), Offers: offers(
		offerSpec{provider: "lambda", id: "a100", model: "A100-SXM-80GB", gpus: 1, perGPU: "1.29"},
		offerSpec{provider: "runpod", id: "4090", model: "RTX-4090-24GB", gpus: 1, perGPU: "0.34"},
	)}, optimizer.DefaultOptions())
	type row struct {
		Source            optimizer.PriceSource
		Current, Rec, Sav string
		Pct               string
	}
	var got []row
	for _, tp := range p.Teams {
		for _, w := range tp.Workloads {
			r := row{Source: w.Current.PriceSource, Current: w.Current.CostUSDPerMonth.String(), Rec: w.Recommended.CostUSDPerMonth.String()}
			if w.Savings != nil {
				r.Sav, r.Pct = w.Savings.USDPerMonth.String(), w.Savings.Percent.String()
			}
			got = append(got, r)
		}
	}
	want := []row{
		// 1.29 × 730 = 941.70; 0.34 × 730 = 248.20.
		{Source: optimizer.PriceMarket, Current: "941.7", Rec: "248.2", Sav: "693.5", Pct: "73.6"},
		// 2 × 1.50 × 100 = 300; 0.34 × 100 = 34.
		{Source: optimizer.PricePaid, Current: "300", Rec: "34", Sav: "266", Pct: "88.7"},
		{Source: optimizer.PriceNone, Current: "0", Rec: "248.2"},
		// 1.00 × 730 = 730.
		{Source: optimizer.PricePaid, Current: "730", Rec: "248.2", Sav: "481.8", Pct: "66"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("savings (-want +got):\n%s", diff)
	}
	if m := p.Teams[0].Workloads[1].Current.MarketUSDPerGPUHour; m == nil || m.String() != "1.29" {
		t.Errorf("paid placement market price %v, want 1.29", m)
	}
	if !strings.Contains(strings.Join(p.Teams[0].Workloads[2].Caveats, "\n"), "current placement not priced") {
		t.Errorf("unpriced caveats %q", p.Teams[0].Workloads[2].Caveats)
	}
	type totals struct {
		Compared               int
		Current, Rec, Sav, Pct string
	}
	tot := func(x optimizer.Totals) totals {
		return totals{x.Compared, x.CurrentUSDPerMonth.String(), x.RecommendedUSDPerMonth.String(), x.SavingsUSDPerMonth.String(), x.SavingsPercent.String()}
	}
	if diff := cmp.Diff(totals{2, "1241.7", "282.2", "959.5", "77.3"}, tot(p.Teams[0].Totals)); diff != "" {
		t.Errorf("team a totals (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(totals{3, "1971.7", "530.4", "1441.3", "73.1"}, tot(p.Totals)); diff != "" {
		t.Errorf("plan totals (-want +got):\n%s", diff)
	}
	rows := p.Rows("run")
	if len(rows) != 4 || rows[2].CurrentUSDPerMonth != nil || rows[0].SavingsUSDPerMonth.String() != "693.5" {
		t.Fatalf("Rows() = %+v", rows)
	}
	// The stored rows add up to the same totals, the unpriced workload left out as the plan
	// leaves it out (what the weekly report compares a week later).
	if diff := cmp.Diff(totals{2, "1241.7", "282.2", "959.5", "77.3"}, tot(optimizer.RowTotals(rows[:3]))); diff != "" {
		t.Errorf("team a's stored rows add up to (-want +got):\n%s", diff)
	}
	if got := optimizer.RowTotals(rows); got.Workloads != 4 || got.Compared != 3 || tot(got) != tot(p.Totals) {
		t.Errorf("every stored row adds up to %+v, want the plan's %+v", got, p.Totals)
	}
}

// TestDeterministic: the same inputs in any order give the same plan.
func TestDeterministic(t *testing.T) {
	in := optimizer.Input{Workloads: MustReadSample(t), Offers: MustOffers(t)}
	first, _ := json.Marshal(MustOptimize(t, in, optimizer.DefaultOptions()))
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5; i++ {
		shuffled := append([]schema.Offer(nil), in.Offers...)
		r.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		in2 := in
		in2.Offers = shuffled
		got, _ := json.Marshal(MustOptimize(t, in2, optimizer.DefaultOptions()))
		if string(got) != string(first) {
			t.Fatalf("plan changed with offer order (shuffle %d)", i)
		}
	}
}

// TestOptimizeInputErrors: unusable input is an error, not a plan.
func TestOptimizeInputErrors(t *testing.T) {
	good := MustReadSample(t)
	bad := optimizer.DefaultOptions()
	bad.HoursPerMonth = 0
	tests := []struct {
		name string
		in   optimizer.Input
		opts optimizer.Options
		want string
	}{
		{name: "no time", in: optimizer.Input{Workloads: good}, opts: optimizer.DefaultOptions(), want: "Input.Now is required"},
		{name: "bad options", in: optimizer.Input{Now: fixtureNow, Workloads: good}, opts: bad, want: "hours_per_month"},
		{name: "no workloads", in: optimizer.Input{Now: fixtureNow}, opts: optimizer.DefaultOptions(), want: "no workloads"},
		{name: "workload built in code without kind", in: optimizer.Input{Now: fixtureNow, Workloads: &optimizer.File{Teams: []optimizer.Team{{Name: "t", Workloads: []optimizer.Workload{{Name: "w"}}}}}},
			opts: optimizer.DefaultOptions(), want: `unknown kind ""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := optimizer.Optimize(tt.in, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Optimize() error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
