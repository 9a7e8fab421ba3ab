package optimizer_test

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/schema"
)

// The cases of this file are choices an ML engineer checks at a glance: what the GPU can run
// (precision, engine, fabric), how much work it does per dollar, which hosts and places serve,
// and how today's placement is costed. Each states its hand computation.

func reasons(wp optimizer.WorkloadPlan) string {
	var out []string
	for _, r := range wp.Rejected {
		out = append(out, r.Reason)
	}
	return strings.Join(out, "\n")
}

func TestGPUModelDecides(t *testing.T) {
	tests := []struct {
		name      string
		workload  string
		offers    []schema.Offer
		recommend string
		rejected  []string // parts of the rejection reasons
		check     func(t *testing.T, wp optimizer.WorkloadPlan)
	}{
		{
			// 300,000 images at 1,000 an hour on an RTX 4090 = 300 h there. Scaled by the FP16
			// dense rate: the 3090 takes 300 × 165.2 / 71 = 698.03 h × $0.22 = $153.57; the 4090
			// 300 h × $0.34 = $102.00, $0.00034 an image; the P40 has no FP16 tensor cores.
			name: "SDXL goes to a card with tensor cores, the cheapest per image",
			workload: `- name: sdxl
  kind: custom
  precision: fp16
  min_vram_gb_per_gpu: 24
  reference_gpu: RTX-4090-24GB
  units_per_month: 300000
  units_per_hour: 1000
  unit: image
`,
			offers: offers(
				offerSpec{provider: "vastai", id: "p40", model: "P40-24GB", gpus: 1, perGPU: "0.10"},
				offerSpec{provider: "vastai", id: "3090", model: "RTX-3090-24GB", gpus: 1, perGPU: "0.22"},
				offerSpec{provider: "runpod", id: "4090", model: "RTX-4090-24GB", gpus: 1, perGPU: "0.34"},
			),
			recommend: "runpod/4090 ×1 on_demand",
			rejected:  []string{"P40-24GB ×1: no FP16 tensor cores (Pascal, sm_61); the workload computes in fp16"},
			check: func(t *testing.T, wp optimizer.WorkloadPlan) {
				r, alt := wp.Recommended, wp.Alternatives
				if r.CostUSDPerMonth.String() != "102" || r.UnitCost == nil || r.UnitCost.Unit != "image" || r.UnitCost.USD.String() != "0.00034" {
					t.Errorf("4090: $%s a month, unit cost %+v; want $102, $0.00034 an image", r.CostUSDPerMonth, r.UnitCost)
				}
				if len(alt) != 1 || alt[0].GPUModel != "RTX-3090-24GB" || alt[0].HoursPerMonth.String() != "698.03" || alt[0].CostUSDPerMonth.String() != "153.57" {
					t.Errorf("alternatives %+v, want the 3090 at 698.03 h and $153.57", alt)
				}
			},
		},
		{
			// 140 GB of fp16 weights + 10.7 GB of KV cache: 8 V100s or P40s, or 4 A100s. vLLM
			// (the default engine) needs compute capability 7.5; V100 is 7.0, P40 6.1.
			name: "70B fp16 serving never on V100 or P40",
			workload: `- name: chat-70b
  kind: inference
  params_b: 70
  precision: fp16
  context_tokens: 8192
  concurrency: 4
  layers: 80
  kv_heads: 8
  head_dim: 128
`,
			offers: offers(
				offerSpec{provider: "vastai", id: "v100x8", model: "V100-SXM2-32GB", gpus: 8, perGPU: "0.20", intra: schema.IntraNVLink},
				offerSpec{provider: "vastai", id: "p40x8", model: "P40-24GB", gpus: 8, perGPU: "0.10"},
				offerSpec{provider: "lambda", id: "a100x4", model: "A100-SXM-80GB", gpus: 4, perGPU: "1.10", intra: nvswitch},
			),
			recommend: "lambda/a100x4 ×4 on_demand",
			rejected: []string{
				"P40-24GB ×8: vLLM needs compute capability 7.5 or newer (P40 is 6.1)",
				"V100-SXM2-32GB ×8: vLLM needs compute capability 7.5 or newer (V100 is 7.0)",
			},
		},
		{
			// 160 h on 8 H100s (989 dense BF16 TFLOPS each) become 160 × 989 / 312 = 507.18 h on
			// 8 A100s: 507.18 × 8 × $1.20 = $4,868.93 against 160 × 8 × $2.49 = $3,187.20.
			name: "the video job goes to the cheapest card per unit of work, not per GPU-hour",
			workload: `- name: video
  kind: custom
  precision: bf16
  min_vram_gb_per_gpu: 80
  gpus: 8
  interconnect: nvlink
  reference_gpu: H100-SXM-80GB
  reference_gpus: 8
  hours_per_month: 160
`,
			offers: offers(
				offerSpec{provider: "vastai", id: "a100x8", model: "A100-SXM-80GB", gpus: 8, perGPU: "1.20", intra: nvswitch},
				offerSpec{provider: "lambda", id: "h100x8", model: "H100-SXM-80GB", gpus: 8, perGPU: "2.49", intra: nvswitch},
			),
			recommend: "lambda/h100x8 ×8 on_demand",
			check: func(t *testing.T, wp optimizer.WorkloadPlan) {
				if r := wp.Recommended; r.CostUSDPerMonth.String() != "3187.2" || r.UnitCost == nil || r.UnitCost.USD.String() != "19.92" {
					t.Errorf("H100: $%s, unit %+v; want $3,187.20, $19.92 an hour of work on 8 H100s", r.CostUSDPerMonth, r.UnitCost)
				}
				if a := wp.Alternatives; len(a) != 1 || a[0].HoursPerMonth.String() != "507.18" || a[0].CostUSDPerMonth.String() != "4868.93" {
					t.Errorf("alternatives %+v, want the A100s at 507.18 h and $4,868.93", a)
				}
			},
		},
		{
			// 13B × 18 bytes of training state is sharded over several GPUs: that needs NVLink,
			// and an offer that does not publish its interconnect has none as far as we know.
			name: "an unpublished interconnect is never used for sharded training",
			workload: `- name: ft-13b
  kind: full_finetune
  params_b: 13
  train_tokens: 1e9
`,
			offers: offers(
				offerSpec{provider: "lambda", id: "gh200x8", model: "GH200-96GB", gpus: 8, perGPU: "1.49", intra: schema.IntraUnknown},
				offerSpec{provider: "lambda", id: "h100x8", model: "H100-SXM-80GB", gpus: 8, perGPU: "2.49", intra: nvswitch},
			),
			recommend: "lambda/h100x8 ×8 on_demand",
			rejected:  []string{"GH200-96GB ×8: interconnect not published, so not NVLink, and training needs it"},
		},
		{
			name: "an unpublished interconnect is never used for tensor parallelism",
			workload: `- name: chat-70b
  kind: inference
  params_b: 70
  precision: fp16
  kv_cache_gb: 10
`,
			offers: offers(
				offerSpec{provider: "runpod", id: "h100x8", model: "H100-SXM-80GB", gpus: 8, perGPU: "1.50", intra: schema.IntraUnknown},
				offerSpec{provider: "lambda", id: "a100x4", model: "A100-SXM-80GB", gpus: 4, perGPU: "1.29", intra: nvswitch},
			),
			recommend: "lambda/a100x4 ×4 on_demand",
			rejected:  []string{"H100-SXM-80GB ×4: interconnect not published: tensor parallelism is never planned on a link nobody vouches for"},
		},
		{
			// 7B × 18 bytes = 126 GB of state needs 8 of the 24 GB cards; their NVLink bridges
			// join pairs only, so sharding across all 8 goes over PCIe.
			name: "RTX 3090 bridges join pairs, not eight cards",
			workload: `- name: ft-7b
  kind: full_finetune
  params_b: 7
  train_tokens: 1e8
`,
			offers: offers(
				offerSpec{provider: "vastai", id: "3090x8", model: "RTX-3090-24GB", gpus: 8, perGPU: "0.15", intra: schema.IntraNVLink},
				offerSpec{provider: "lambda", id: "h100x8", model: "H100-SXM-80GB", gpus: 8, perGPU: "2.49", intra: nvswitch},
			),
			recommend: "lambda/h100x8 ×8 on_demand",
			rejected:  []string{"RTX-3090-24GB ×8: its bridge joins 2 GPUs, not the 7 the work is split over; training needs it"},
		},
		{
			// LoRA trains in bf16 unless the workload allows fp16: Volta has no BF16.
			name: "a bf16 job is never placed on a V100",
			workload: `- name: lora
  kind: lora
  params_b: 7
  train_tokens: 1e9
`,
			offers: offers(
				offerSpec{provider: "vastai", id: "v100", model: "V100-SXM2-32GB", gpus: 1, perGPU: "0.20"},
				offerSpec{provider: "runpod", id: "a100", model: "A100-SXM-80GB", gpus: 1, perGPU: "1.10"},
			),
			recommend: "runpod/a100 ×1 on_demand",
			rejected:  []string{"V100-SXM2-32GB ×1: no BF16 support (Volta, sm_70); the job trains in bf16"},
		},
		{
			// With fp16 allowed, the V100's 125 FP16 TFLOPS at $0.20 beat the A100's 312 at $1.10
			// per job: 0.20 / 125 < 1.10 / 312.
			name: "fp16 as a fallback only where the workload allows it",
			workload: `- name: lora
  kind: lora
  params_b: 7
  train_tokens: 1e9
  precision: [bf16, fp16]
`,
			offers: offers(
				offerSpec{provider: "vastai", id: "v100", model: "V100-SXM2-32GB", gpus: 1, perGPU: "0.20"},
				offerSpec{provider: "runpod", id: "a100", model: "A100-SXM-80GB", gpus: 1, perGPU: "1.10"},
			),
			recommend: "vastai/v100 ×1 on_demand",
			check: func(t *testing.T, wp optimizer.WorkloadPlan) {
				if p := wp.Recommended.Precision; p != optimizer.FP16 {
					t.Errorf("V100 planned at %s, want fp16", p)
				}
			},
		},
		{
			// The same monthly cost ($0.30 × 730 h): the 4090 reads memory at 1,008 GB/s, the
			// 3090 at 936, so the 4090 serves more tokens for the money.
			name: "a tie in price goes to the faster card",
			workload: `- name: chat
  kind: inference
  params_b: 7
  precision: fp16
  context_tokens: 2048
  concurrency: 4
`,
			offers: offers(
				offerSpec{provider: "vastai", id: "a-3090", model: "RTX-3090-24GB", gpus: 1, perGPU: "0.30"},
				offerSpec{provider: "vastai", id: "b-4090", model: "RTX-4090-24GB", gpus: 1, perGPU: "0.30"},
			),
			recommend: "vastai/b-4090 ×1 on_demand",
		},
		{
			name: "gpus_excluded, min_compute_capability and the engine",
			workload: `- name: chat
  kind: inference
  params_b: 7
  precision: fp16
  kv_cache_gb: 2
  engine: tensorrt-llm
  gpus_excluded: [L40S]
  min_compute_capability: "8.9"
`,
			offers: offers(
				offerSpec{provider: "runpod", id: "a10", model: "A10-24GB", gpus: 1, perGPU: "0.30"},
				offerSpec{provider: "runpod", id: "4090", model: "RTX-4090-24GB", gpus: 1, perGPU: "0.34"},
				offerSpec{provider: "runpod", id: "l40s", model: "L40S-48GB", gpus: 1, perGPU: "0.79"},
				offerSpec{provider: "runpod", id: "h100", model: "H100-PCIE-80GB", gpus: 1, perGPU: "1.99"},
			),
			recommend: "runpod/h100 ×1 on_demand",
			rejected: []string{
				"A10-24GB ×1: compute capability 8.6 < 8.9, the workload's min_compute_capability",
				"L40S-48GB ×1: in gpus_excluded",
				"RTX-4090-24GB ×1: TensorRT-LLM supports Blackwell, Hopper, L40/L40S and A100 only (RTX 4090 is Ada, sm_89)",
			},
		},
		{
			// Measured: it fits 48 GB at FP8. The estimate (70 GB of weights + the cache) would
			// need two 48 GB cards.
			name: "a measured footprint replaces the estimate",
			workload: `- name: chat-70b
  kind: inference
  params_b: 70
  precision: fp8
  context_tokens: 4096
  concurrency: 2
  measured_vram_gb: 48
`,
			offers: offers(
				offerSpec{provider: "runpod", id: "l40s", model: "L40S-48GB", gpus: 1, perGPU: "0.79"},
				offerSpec{provider: "runpod", id: "l40sx2", model: "L40S-48GB", gpus: 2, perGPU: "0.79"},
			),
			recommend: "runpod/l40s ×1 on_demand",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wp := planOne(t, tt.workload, tt.offers, optimizer.DefaultOptions())
			if got := placementID(wp.Recommended); got != tt.recommend {
				t.Fatalf("recommended %s, want %s; %s; rejected:\n%s", got, tt.recommend, wp.Reason, reasons(wp))
			}
			for _, want := range tt.rejected {
				if !strings.Contains(reasons(wp), want) {
					t.Errorf("rejections do not say %q:\n%s", want, reasons(wp))
				}
			}
			if tt.check != nil {
				tt.check(t, wp)
			}
		})
	}
}

// TestHostsAndPlaces: always-on serving runs on vetted hosts unless the workload relaxes it;
// location constraints keep offers whose provider publishes no location, with a note.
func TestHostsAndPlaces(t *testing.T) {
	chat := `- name: chat
  kind: inference
  params_b: 7
  precision: fp16
  kv_cache_gb: 2
`
	// The RTX 4090 at three hosts; the 3090 only on a community host, the L4 only on a verified
	// host with a published reliability of 0.95.
	market := func() []schema.Offer {
		offs := offers(
			offerSpec{provider: "vastai", id: "unverified", model: "RTX-4090-24GB", gpus: 1, perGPU: "0.20"},
			offerSpec{provider: "vastai", id: "verified", model: "RTX-4090-24GB", gpus: 1, perGPU: "0.31"},
			offerSpec{provider: "runpod", id: "secure", model: "RTX-4090-24GB", gpus: 1, perGPU: "0.39"},
			offerSpec{provider: "runpod", id: "community", model: "RTX-3090-24GB", gpus: 1, perGPU: "0.15"},
			offerSpec{provider: "vastai", id: "l4", model: "L4-24GB", gpus: 1, perGPU: "0.33"},
		)
		offs[0].Tier, offs[1].Tier, offs[2].Tier, offs[3].Tier, offs[4].Tier = schema.TierUnverified, schema.TierVerified, schema.TierSecure, schema.TierCommunity, schema.TierVerified
		rel := 0.95
		offs[1].Reliability, offs[4].Reliability = &rel, &rel
		return offs
	}
	tests := []struct {
		name, extra, recommend, reason string
		never                          string // an offer id no placement may use
	}{
		{"always-on serving: verified or datacenter hosts only", "", "vastai/verified ×1 on_demand",
			"RTX-3090-24GB ×1: only on community hosts at runpod; always-on serving runs on datacenter, secure, verified hosts unless host_tiers says otherwise", "unverified"},
		{"host_tiers: [any] relaxes it", "  host_tiers: [any]\n", "runpod/community ×1 on_demand", "", ""},
		{"min_reliability rejects a host below it", "  min_reliability: 0.99\n", "runpod/secure ×1 on_demand",
			"L4-24GB ×1: host reliability 0.95 at vastai < 0.99 (min_reliability)", "verified"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wp := planOne(t, chat+tt.extra, market(), optimizer.DefaultOptions())
			if got := placementID(wp.Recommended); got != tt.recommend {
				t.Errorf("recommended %s, want %s; rejected:\n%s", got, tt.recommend, reasons(wp))
			}
			if !strings.Contains(reasons(wp), tt.reason) {
				t.Errorf("rejections do not say %q:\n%s", tt.reason, reasons(wp))
			}
			for _, a := range append([]optimizer.Placement{*wp.Recommended}, wp.Alternatives...) {
				if tt.never != "" && a.OfferID == tt.never {
					t.Errorf("placement %s on the %s host", placementID(&a), tt.never)
				}
			}
		})
	}

	t.Run("a region keeps a provider that publishes no location, with a note", func(t *testing.T) {
		offs := offers(
			offerSpec{provider: "coreweave", id: "eu", model: "L40S-48GB", gpus: 1, perGPU: "0.30", region: "europe"},
			offerSpec{provider: "lambda", id: "any", model: "L4-24GB", gpus: 1, perGPU: "0.40"},
			offerSpec{provider: "vastai", id: "tx", model: "L4-24GB", gpus: 1, perGPU: "0.45", region: "us-texas"},
		)
		offs[2].Country = "US"
		wp := planOne(t, chat+"  regions: [north-america]\n", offs, optimizer.DefaultOptions())
		if got := placementID(wp.Recommended); got != "lambda/any ×1 on_demand" {
			t.Fatalf("recommended %s, want lambda's unlocated offer", got)
		}
		if notes := strings.Join(wp.Recommended.Notes, "\n"); !strings.Contains(notes, "lambda does not publish where this offer runs: check it is in north-america") {
			t.Errorf("notes %q do not caveat the missing location", notes)
		}
		if len(wp.Alternatives) != 1 || wp.Alternatives[0].Provider != "vastai" || len(wp.Alternatives[0].Notes) != 0 {
			t.Errorf("alternatives %+v, want vastai in the US without a note", wp.Alternatives)
		}
		if !strings.Contains(reasons(wp), "L40S-48GB ×1: offered in europe (coreweave), where the workload does not run") {
			t.Errorf("rejections:\n%s", reasons(wp))
		}
	})
}

// TestCurrentPlacement: today's placement is costed on the node it runs on, and a GPU the
// catalog lacks leaves that placement unpriced instead of rejecting the file.
func TestCurrentPlacement(t *testing.T) {
	t.Run("512 H100s run on NVSwitch nodes joined by InfiniBand", func(t *testing.T) {
		wp := planOne(t, `- name: pretrain-70b
  kind: pretrain
  params_b: 70
  train_tokens: 1.4e12
  deadline: 60d
  runs_per_month: 0.25
  current:
    provider: coreweave
    gpu_model: H100-SXM-80GB
    gpu_count: 512
`, offers(offerSpec{provider: "coreweave", id: "h100x8", model: "H100-SXM-80GB", gpus: 8, perGPU: "6.155", intra: nvswitch, inter: ib}), optimizer.DefaultOptions())
		c := wp.Current
		if c.IntraNode != nvswitch || c.InterNode != ib || c.Nodes != 64 || c.GPUsPerNode != 8 {
			t.Errorf("current on %s/%s, %d nodes of %d; want NVSwitch nodes over InfiniBand, 64 × 8", c.IntraNode, c.InterNode, c.Nodes, c.GPUsPerNode)
		}
		// 6 × 70e9 × 1.4e12 FLOPs / (512 × 989e12 × MFU 0.40 × NVSwitch 0.90 × inter-node 0.85).
		want := 6 * 70e9 * 1.4e12 / (512 * 989e12 * 0.40 * 0.90 * 0.85) / 3600
		if got := c.HoursPerRun.InexactFloat64(); math.Abs(got-want) > 0.01 {
			t.Errorf("current run %v h, want %.2f h (NVSwitch scaling; 8-GPU NVLink scaling would say %.2f)", got, want, want*0.90/0.85)
		}
	})
	t.Run("a GPU the catalog lacks: that placement unpriced, the rest planned", func(t *testing.T) {
		doc := `teams:
  - name: t
    email: t@example.com
    workloads:
      - name: old
        kind: inference
        params_b: 7
        precision: fp16
        kv_cache_gb: 2
        current: {provider: vastai, gpu_model: P100-16GB}
      - name: chat
        kind: inference
        params_b: 7
        precision: fp16
        kv_cache_gb: 2
`
		p := MustOptimize(t, optimizer.Input{Workloads: MustParse(t, "w.yaml", doc),
			Offers: offers(offerSpec{provider: "runpod", id: "4090", model: "RTX-4090-24GB", gpus: 1, perGPU: "0.34"})}, optimizer.DefaultOptions())
		old, chat := p.Teams[0].Workloads[0], p.Teams[0].Workloads[1]
		if old.Current == nil || old.Current.PriceSource != optimizer.PriceNone || old.Savings != nil ||
			!strings.Contains(strings.Join(old.Caveats, "\n"), `current placement not priced: unknown GPU model "P100-16GB"`) {
			t.Errorf("old: current %+v, caveats %q; want it unpriced and said why", old.Current, old.Caveats)
		}
		if old.Recommended == nil || chat.Recommended == nil {
			t.Errorf("both workloads are planned: %v, %v", old.Recommended, chat.Recommended)
		}
	})
}

// TestUnitCost: what a million output tokens cost at the planned concurrency.
func TestUnitCost(t *testing.T) {
	wp := planOne(t, `- name: chat
  kind: inference
  params_b: 7
  precision: fp16
  context_tokens: 1000
  concurrency: 10
  layers: 32
  kv_heads: 8
  head_dim: 128
`, offers(offerSpec{provider: "runpod", id: "4090", model: "RTX-4090-24GB", gpus: 1, perGPU: "0.34"}), optimizer.DefaultOptions())
	// KV cache 2 × 2 B × 32 layers × 8 heads × 128 × 10,000 tokens = 1.31072 GB; each decode
	// step reads it and the 14 GB of weights: 1,008 GB/s ÷ 15.31072 GB = 65.84 tokens/s per
	// sequence, × 10 sequences × 3,600 s = 2,370,114 tokens an hour for $0.34.
	perHour := 1008 / (14 + 1.31072) * 10 * 3600
	want := decimal.NewFromFloat(0.34 * 1e6 / perHour).Round(6)
	u := wp.Recommended.UnitCost
	if u == nil || u.Unit != "1M output tokens" || !u.USD.Equal(want) {
		t.Errorf("unit cost %+v, want %s per 1M output tokens", u, want)
	}
}

// TestScaleByAndLinkReach: custom work scaled by a precision's rate only runs where that rate
// exists, and a group of GPUs larger than its NVLink domain is costed over PCIe the same way
// for today's placement, for offers, and in the reasons.
func TestScaleByAndLinkReach(t *testing.T) {
	t.Run("custom work scaled by bf16 is never placed on a card without BF16", func(t *testing.T) {
		wp := planOne(t, `- name: render
  kind: custom
  min_vram_gb_per_gpu: 16
  reference_gpu: A10-24GB
  hours_per_month: 100
  scale_by: bf16
`, offers(
			offerSpec{provider: "vastai", id: "v100", model: "V100-SXM2-32GB", gpus: 1, perGPU: "0.10"},
			offerSpec{provider: "vastai", id: "a10", model: "A10-24GB", gpus: 1, perGPU: "0.50"},
		), optimizer.DefaultOptions())
		if wp.Recommended == nil || wp.Recommended.GPUModel != "A10-24GB" {
			t.Fatalf("recommended %+v, want the A10: the V100 has no BF16 rate to scale by", wp.Recommended)
		}
		if want := "V100-SXM2-32GB ×1: no BF16 support (Volta, sm_70); the work scales by its bf16 rate"; !strings.Contains(reasons(wp), want) {
			t.Errorf("rejections:\n%s\nwant %q", reasons(wp), want)
		}
	})
	t.Run("today's card without the scale_by precision is costed at its best rate", func(t *testing.T) {
		// 100 h on an A10 (125 dense BF16 TFLOPS); today's V100 has no BF16, so it is costed at
		// its FP16 rate (125 TFLOPS): 100 × 125 / 125 = 100 h, at $0.10 = $10.00.
		wp := planOne(t, `- name: render
  kind: custom
  min_vram_gb_per_gpu: 16
  reference_gpu: A10-24GB
  hours_per_month: 100
  scale_by: bf16
  current: {provider: vastai, gpu_model: V100-SXM2-32GB}
`, offers(
			offerSpec{provider: "vastai", id: "v100", model: "V100-SXM2-32GB", gpus: 1, perGPU: "0.10"},
			offerSpec{provider: "vastai", id: "a10", model: "A10-24GB", gpus: 1, perGPU: "0.50"},
		), optimizer.DefaultOptions())
		c := wp.Current
		if c == nil || !c.CostUSDPerMonth.Equal(decimal.RequireFromString("10")) {
			t.Fatalf("current %+v, want 100 h at $0.10/h", c)
		}
		if want := "today's V100-SXM2-32GB has no BF16 support (Volta, sm_70) (the work scales by its bf16 rate): costed at its fp16 rate"; !strings.Contains(strings.Join(wp.Caveats, "\n"), want) {
			t.Errorf("caveats %q, want %q", wp.Caveats, want)
		}
	})
	t.Run("today's eight bridged H100 NVLs serve in pairs like the same offer", func(t *testing.T) {
		// 70B at fp16 (140 GB of weights, 10.7 GB of KV cache) needs two 94 GB cards: tensor
		// parallelism 2, inside one NVLink bridge. Today's 8 cards are 4 such pairs, each as
		// fast as the pair of the same offer: 2 × 3,938 GB/s × NVLink 0.85 per step.
		wp := planOne(t, `- name: chat-70b
  kind: inference
  params_b: 70
  precision: fp16
  context_tokens: 8192
  concurrency: 4
  layers: 80
  kv_heads: 8
  current: {provider: runpod, gpu_model: H100-NVL-94GB, gpu_count: 8}
`, offers(
			offerSpec{provider: "runpod", id: "nvl8", model: "H100-NVL-94GB", gpus: 8, perGPU: "2.00", intra: schema.IntraNVLink},
		), optimizer.DefaultOptions())
		r, c := wp.Recommended, wp.Current
		if r == nil || c == nil {
			t.Fatalf("recommended %+v, current %+v", r, c)
		}
		if r.DecodeTokensPerSecond != c.DecodeTokensPerSecond {
			t.Errorf("a pair decodes %v tokens/s today and %v on the same offer", c.DecodeTokensPerSecond, r.DecodeTokensPerSecond)
		}
		// The same offer, the same pairs: per token both cost the same.
		if c.UnitCost == nil || r.UnitCost == nil || !c.UnitCost.USD.Equal(r.UnitCost.USD) {
			t.Errorf("per 1M tokens: today %+v, the offer %+v; want equal", c.UnitCost, r.UnitCost)
		}
	})
	t.Run("the speed in a throughput reason is the one that was checked", func(t *testing.T) {
		// 70B fp16 on four A6000s: the bridges join pairs, so the four talk over PCIe; the
		// reason must give that speed, below the 15 tokens/s asked for, not the bridged one.
		wp := planOne(t, `- name: chat-70b
  kind: inference
  params_b: 70
  precision: fp16
  kv_cache_gb: 10
  min_decode_tokens_per_second: 15
`, offers(
			offerSpec{provider: "vastai", id: "a6000x4", model: "RTX-A6000-48GB", gpus: 4, perGPU: "0.40", intra: schema.IntraNVLink},
			offerSpec{provider: "lambda", id: "h100x4", model: "H100-SXM-80GB", gpus: 4, perGPU: "2.49", intra: nvswitch},
		), optimizer.DefaultOptions())
		m := regexp.MustCompile(`RTX-A6000-48GB ×4: ~(\d+) tokens/s per sequence < 15 needed`).FindStringSubmatch(reasons(wp))
		if m == nil {
			t.Fatalf("rejections:\n%s\nwant the A6000s rejected for speed", reasons(wp))
		}
		if n, _ := strconv.Atoi(m[1]); n >= 15 {
			t.Errorf("reason gives ~%d tokens/s, which is not below the 15 needed", n)
		}
	})
}
